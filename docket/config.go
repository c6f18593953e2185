package docket

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/sqlschema"
	"github.com/docketrun/docket-go/policy"
)

// ErrInvalidSchemaName reports a schema name that Open (Config.Schema) and a Migrator refuse.
var ErrInvalidSchemaName = errors.New("docket: invalid schema name")

// schemaNamePattern keeps schema names to plain identifiers: a search_path
// lists schemas separated by commas and the name lands in DDL.
var schemaNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// TenantMode says whether runs must name a tenant.
type TenantMode int

const (
	// TenantNone allows tenantless runs; the omitted policy is Legacy.
	TenantNone TenantMode = iota
	// TenantRequired rejects tenantless runs and requires TenantFair.
	TenantRequired
)

// String returns "none" or "required".
func (m TenantMode) String() string {
	switch m {
	case TenantNone:
		return "none"
	case TenantRequired:
		return "required"
	}
	return "invalid"
}

// Config configures a Client. Open validates it before any database access.
type Config struct {
	// TenantMode is TenantNone (default) or TenantRequired.
	TenantMode TenantMode
	// ClaimPolicy is policy.Legacy{} or policy.TenantFair{...}. Nil means
	// Legacy, which is allowed only with TenantNone.
	ClaimPolicy policy.ClaimPolicy
	// MeterProvider receives identity-free metrics; nil disables them.
	MeterProvider metric.MeterProvider
	// TracerProvider receives the docket.insert, docket.claim,
	// docket.handler and docket.commit spans (see docs/telemetry.md); nil
	// starts no span. Inserts store the trace context of the inserting
	// context's span either way, so a handler span can link to it.
	TracerProvider trace.TracerProvider
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// AsyncClaimCommit makes ClaimDue and the Worker run each claim with
	// synchronous_commit off for that claim's own transaction only (the
	// Worker's also holds the read of its leases); ClaimDueTx and the trace
	// calls are never affected.
	// It raises claim throughput on a durable server, since a claim no longer
	// waits for its WAL flush (for TenantFair, inside its serialized section).
	// The price is that a crash can lose the latest claims: their runs become
	// claimable again at once, and their holders cannot commit, because every
	// write is fenced by the lost claim token. False (the default) keeps the
	// session's setting; see docs/performance.md, "synchronous_commit".
	AsyncClaimCommit bool
	// Schema names the schema (the fairness domain) Docket's tables live in.
	// Every statement Docket sends, on the pool or in the app's own
	// transaction, then runs with search_path set to it for that statement
	// only, in the same round trip, so the app's pool keeps its own
	// search_path. Empty means whatever the pool's search_path resolves to.
	Schema string
}

// validate checks the configuration and returns the resolved engine.
func (c Config) validate() (engine, error) {
	if err := validateSchemaName(c.Schema); err != nil {
		return engine{}, err
	}
	if c.TenantMode != TenantNone && c.TenantMode != TenantRequired {
		return engine{}, invalidConfig("tenant mode %d is neither TenantNone nor TenantRequired", int(c.TenantMode))
	}
	return c.resolveEngine()
}

// resolveEngine resolves Config.ClaimPolicy to its engine. It is the only
// place that names the closed set of engines: an engine of any other type,
// even one embedding Legacy or TenantFair, is refused.
func (c Config) resolveEngine() (engine, error) {
	switch p := c.ClaimPolicy.(type) {
	case nil:
		if c.TenantMode == TenantRequired {
			return engine{}, invalidConfig("required tenancy needs policy.TenantFair with an explicit DefaultMaxActiveRuns")
		}
		return legacyEngine(), nil
	case policy.Legacy, *policy.Legacy:
		if c.TenantMode == TenantRequired {
			return engine{}, invalidConfig("required tenancy rejects the tenant-blind Legacy policy")
		}
		return legacyEngine(), nil
	case policy.TenantFair:
		return validTenantFair(p)
	case *policy.TenantFair:
		if p == nil {
			return engine{}, invalidConfig("nil *policy.TenantFair")
		}
		return validTenantFair(*p)
	default:
		return engine{}, invalidConfig("unsupported claim policy %T", c.ClaimPolicy)
	}
}

// validTenantFair requires an explicit default cap in 1..MaxCap; the zero
// value (an omitted cap) is rejected like any other out-of-range value.
func validTenantFair(p policy.TenantFair) (engine, error) {
	if err := validateCap(p.DefaultMaxActiveRuns); err != nil {
		return engine{}, invalidConfig("TenantFair.DefaultMaxActiveRuns %d: %w", p.DefaultMaxActiveRuns, err)
	}
	return tenantFairEngine(p), nil
}

// validateCap checks a cap for the policy default or an override.
func validateCap(v int) error {
	if v < 1 || v > MaxCap {
		return ErrInvalidCap
	}
	return nil
}

// validateSchemaName refuses a Config.Schema that is not a plain identifier.
func validateSchemaName(schema string) error {
	if schema != "" && !schemaNamePattern.MatchString(schema) {
		return invalidConfig("schema %q is not a plain identifier", schema)
	}
	return nil
}

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

// qualifier rewrites generated statements to name Docket's relations in one
// schema. Parsing (and pgx's statement preparation) resolves relation names
// before any setting in the same round trip applies, so scoping by
// search_path alone cannot serve an app whose search_path lacks the schema.
// Every relation in db/queries carries sqlschema's marker, which qualify
// replaces. Rewritten texts are cached: the generated statements are a
// fixed set.
type qualifier struct {
	// searchPath is the schema as a search_path value (quoted as needed).
	searchPath string
	schema     string
	cache      sync.Map // statement text -> qualified text
}

// newQualifier returns the qualifier for schema.
func newQualifier(schema string) *qualifier {
	return &qualifier{searchPath: searchPathValue(schema), schema: schema}
}

// qualify returns sql with every marked Docket relation named in the
// qualifier's schema.
func (q *qualifier) qualify(sql string) string {
	if cached, ok := q.cache.Load(sql); ok {
		return cached.(string)
	}
	qualified := sqlschema.Qualify(sql, q.schema)
	q.cache.Store(sql, qualified)
	return qualified
}

// lowerIdentifier is a name PostgreSQL keeps as written without quotes.
var lowerIdentifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// searchPathValue is schema as a search_path entry: bare when PostgreSQL
// keeps it as written, quoted otherwise (an upper-case letter would fold).
func searchPathValue(schema string) string {
	if lowerIdentifier.MatchString(schema) {
		return schema
	}
	return pgx.Identifier{schema}.Sanitize()
}
