package sqlschema

import (
	"context"
	"errors"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Statements that scope one statement to a schema. set_config with
// is_local = true lasts until the end of the transaction, and a batch sent
// in one round trip is one implicit transaction, so on a pool or a
// connection the setting ends with the statement; inside the app's own
// transaction the app's value is saved first and restored right after.
const (
	// ScopeSearchPath sets search_path ($1) until the end of the
	// transaction, which for a batch on a pool is the batch.
	ScopeSearchPath   = `select set_config('search_path', $1, true)`
	saveSearchPath    = `select set_config('docket.saved_search_path', current_setting('search_path'), true), set_config('search_path', $1, true)`
	restoreSearchPath = `select set_config('search_path', current_setting('docket.saved_search_path'), true)`
	// The same for an app's statements, which also name the app's own
	// relations unqualified: Docket's schema first, then the app's path.
	scopeAppSearchPath = `select set_config('search_path', $1 || ', ' || current_setting('search_path'), true)`
	saveAppSearchPath  = `select set_config('docket.saved_search_path', current_setting('search_path'), true), set_config('search_path', $1 || ', ' || current_setting('search_path'), true)`
)

// BatchSender is what a scoped executor runs on: a pool, a connection or a
// transaction.
type BatchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// DB is the executor the generated code takes (sqlc's DBTX).
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Schema rewrites generated statements to name Docket's relations in one
// schema. Parsing (and pgx's statement preparation) resolves relation names
// before any setting in the same round trip applies, so scoping by
// search_path alone cannot serve an app whose search_path lacks the schema.
// Every relation in db/queries carries Marker, which Qualify replaces.
// Rewritten texts are cached: the generated statements are a fixed set.
type Schema struct {
	searchPath string
	name       string
	cache      sync.Map // statement text -> qualified text
}

// NewSchema returns the Schema of name.
func NewSchema(name string) *Schema {
	return &Schema{searchPath: SearchPathValue(name), name: name}
}

// SearchPath is the schema as a search_path value (quoted as needed).
func (s *Schema) SearchPath() string { return s.searchPath }

// Qualify returns sql with every marked Docket relation named in the
// schema.
func (s *Schema) Qualify(sql string) string {
	if cached, ok := s.cache.Load(sql); ok {
		return cached.(string)
	}
	qualified := Qualify(sql, s.name)
	s.cache.Store(sql, qualified)
	return qualified
}

// On returns db as an executor that runs every statement with Docket's
// relations qualified by the schema and with search_path set to it for that
// statement only (for what resolves at run time: current_schema() and
// to_regclass), in the same round trip, so an app whose pool or transaction
// has its own search_path uses Docket without changing it. It works behind
// a transaction-mode pooler: each call is one transaction. borrowed marks
// the app's own transaction, whose search_path is restored after each
// statement.
func (s *Schema) On(db BatchSender, borrowed bool) DB {
	return scopedDB{db: db, schema: s, borrowed: borrowed}
}

// OnApp is On for an app's own statements (the public repository's and the
// app's sqlc queries): the search_path of each statement is the schema
// followed by the app's own, so the app's unqualified relations still
// resolve whichever way pgx sends the statement.
func (s *Schema) OnApp(db BatchSender, borrowed bool) DB {
	return scopedDB{db: db, schema: s, borrowed: borrowed, appPath: true}
}

// scopedDB is Schema.On's executor.
type scopedDB struct {
	db       BatchSender
	schema   *Schema
	borrowed bool
	appPath  bool
}

// batch queues sql between the scoping statements.
func (s scopedDB) batch(sql string, args []any) *pgx.Batch {
	b := &pgx.Batch{}
	switch {
	case s.borrowed && s.appPath:
		b.Queue(saveAppSearchPath, s.schema.searchPath)
	case s.borrowed:
		b.Queue(saveSearchPath, s.schema.searchPath)
	case s.appPath:
		b.Queue(scopeAppSearchPath, s.schema.searchPath)
	default:
		b.Queue(ScopeSearchPath, s.schema.searchPath)
	}
	b.Queue(s.schema.Qualify(sql), args...)
	if s.borrowed {
		b.Queue(restoreSearchPath)
	}
	return b
}

// Exec implements DB.
func (s scopedDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	results := s.db.SendBatch(ctx, s.batch(sql, args))
	_, err := results.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = results.Exec()
	}
	return tag, errors.Join(err, closeUnlessFailed(results, err))
}

// Query implements DB; closing the rows ends the round trip.
func (s scopedDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	results := s.db.SendBatch(ctx, s.batch(sql, args))
	if _, err := results.Exec(); err != nil {
		return nil, errors.Join(err, closeUnlessFailed(results, err))
	}
	rows, err := results.Query()
	if err != nil {
		return nil, errors.Join(err, closeUnlessFailed(results, err))
	}
	return &scopedRows{Rows: rows, results: results}, nil
}

// QueryRow implements DB.
func (s scopedDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	rows, err := s.Query(ctx, sql, args...)
	return scopedRow{rows: rows, err: err}
}

// closeUnlessFailed closes results; after a statement error the batch's
// close repeats that error, which the caller already has.
func closeUnlessFailed(results pgx.BatchResults, err error) error {
	closeErr := results.Close()
	if err != nil {
		return nil
	}
	return closeErr
}

// scopedRows are a statement's rows whose Close also ends its batch.
type scopedRows struct {
	pgx.Rows
	results pgx.BatchResults
	closed  bool
	err     error
}

// Close implements pgx.Rows.
func (r *scopedRows) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.Rows.Close()
	if err := r.results.Close(); err != nil && r.Rows.Err() == nil {
		r.err = err
	}
}

// Err implements pgx.Rows.
func (r *scopedRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

// scopedRow is QueryRow's row over scopedDB.Query.
type scopedRow struct {
	rows pgx.Rows
	err  error
}

// Scan implements pgx.Row with QueryRow's semantics: pgx.ErrNoRows when the
// statement returned no row.
func (r scopedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		r.rows.Close()
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

// lowerIdentifier is a name PostgreSQL keeps as written without quotes.
var lowerIdentifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// SearchPathValue is schema as a search_path entry: bare when PostgreSQL
// keeps it as written, quoted otherwise (an upper-case letter would fold).
func SearchPathValue(schema string) string {
	if lowerIdentifier.MatchString(schema) {
		return schema
	}
	return pgx.Identifier{schema}.Sanitize()
}
