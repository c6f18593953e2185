package docket

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Statements that scope one statement to Config.Schema. set_config with
// is_local = true lasts until the end of the transaction, and a batch sent
// in one round trip is one implicit transaction, so on a pool or a
// connection the setting ends with the statement; inside the app's own
// transaction the app's value is saved first and restored right after.
const (
	scopeSearchPath   = `select set_config('search_path', $1, true)`
	saveSearchPath    = `select set_config('docket.saved_search_path', current_setting('search_path'), true), set_config('search_path', $1, true)`
	restoreSearchPath = `select set_config('search_path', current_setting('docket.saved_search_path'), true)`
)

// batchSender is what the scoped executor needs: a pool, a connection or a
// transaction.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// scopedDB runs every generated statement with Docket's relations qualified
// by schema and with search_path set to schema for that statement only (for
// what resolves at run time: current_schema() and to_regclass), in the same
// round trip, so an app whose pool or transaction has its own search_path
// uses Docket without changing it. It works behind a transaction-mode
// pooler: each call is one transaction.
type scopedDB struct {
	db    batchSender
	names *qualifier
	// borrowed is set for the app's own transaction, whose search_path is
	// restored after each statement.
	borrowed bool
}

var _ dbgen.DBTX = scopedDB{}

// batch queues sql between the scoping statements.
func (s scopedDB) batch(sql string, args []any) *pgx.Batch {
	b := &pgx.Batch{}
	if s.borrowed {
		b.Queue(saveSearchPath, s.names.searchPath)
	} else {
		b.Queue(scopeSearchPath, s.names.searchPath)
	}
	b.Queue(s.names.qualify(sql), args...)
	if s.borrowed {
		b.Queue(restoreSearchPath)
	}
	return b
}

// Exec implements dbgen.DBTX.
func (s scopedDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	results := s.db.SendBatch(ctx, s.batch(sql, args))
	_, err := results.Exec()
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = results.Exec()
	}
	return tag, errors.Join(err, closeUnlessFailed(results, err))
}

// Query implements dbgen.DBTX; closing the rows ends the round trip.
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

// QueryRow implements dbgen.DBTX.
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
