package dockettest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// DB is what the helpers without Tx read through: the application's pool,
// or the docket.Client (its pool, in its Config.Schema).
type DB interface {
	*pgxpool.Pool | *docket.Client
}

// querier runs the helpers' reads: a pool or the caller's transaction,
// which sees the transaction's own uncommitted inserts.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// source returns the querier and the default schema of db.
func source[D DB](db D) (querier, string) {
	switch d := any(db).(type) {
	case *docket.Client:
		if d != nil {
			return d.Pool(), d.Schema()
		}
	case *pgxpool.Pool:
		if d != nil {
			return d, ""
		}
	}
	return nil, ""
}

// reader reads docket_runs of one schema ("" is the search_path's).
type reader struct {
	q      querier
	schema string
	// ofClient says that schema is the client's Config.Schema, not an
	// expectation's Schema.
	ofClient bool
}

// newReader returns the reader of expectations on q, whose default schema is
// fallback; the expectations must agree on their Schema.
func newReader(q querier, fallback string, expects ...Expect) (reader, error) {
	schema := ""
	for i, e := range expects {
		if err := e.check(); err != nil {
			return reader{}, err
		}
		if i > 0 && e.Schema != schema {
			return reader{}, fmt.Errorf("the expectations name the schemas %q and %q; one read covers one schema", schema, e.Schema)
		}
		schema = e.Schema
	}
	if q == nil {
		return reader{}, fmt.Errorf("no database: pass a pool, a client or a transaction")
	}
	if schema == "" && fallback != "" {
		return reader{q: q, schema: fallback, ofClient: true}, nil
	}
	return reader{q: q, schema: schema}, nil
}

// table is docket_runs, qualified with the reader's schema when it has one.
func (r reader) table() string {
	if r.schema == "" {
		return "docket_runs"
	}
	return pgx.Identifier{r.schema, "docket_runs"}.Sanitize()
}

// storedRun is a run as read, with its insert order.
type storedRun struct {
	id  int64
	run docket.Run
}

// read returns the runs a where clause over r selects, in insert order.
func (r reader) read(ctx context.Context, where string, args ...any) ([]storedRun, error) {
	rows, err := r.q.Query(ctx, `select id, run_id, tenant_id, graph_id, graph_hash, status, step, state::text,
		checkpoint_seq, coalesce(latest_checkpoint_type, ''), wake_at, inserted_at
		from `+r.table()+` where `+where+` order by id`, args...)
	if err != nil {
		return nil, r.readError(err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedRun, error) {
		var s storedRun
		var tenant *string
		var state string
		var step int32
		var wake *time.Time
		err := row.Scan(&s.id, &s.run.RunID, &tenant, &s.run.GraphID, &s.run.GraphHash, &s.run.Status, &step, &state,
			&s.run.CheckpointSeq, &s.run.LatestCheckpointType, &wake, &s.run.InsertedAt)
		s.run.Scope = docket.Tenantless
		if tenant != nil {
			s.run.Scope = docket.Tenant(*tenant)
		}
		s.run.Step, s.run.State, s.run.WakeAt = int(step), json.RawMessage(state), wake
		return s, err
	})
	if err != nil {
		return nil, r.readError(err)
	}
	return out, nil
}

// readError reports a failed read of docket_runs; when the table is not
// there (undefined_table), it says which schema option decides where the
// helpers look.
func (r reader) readError(err error) error {
	var pgErr *pgconn.PgError
	switch {
	case !errors.As(err, &pgErr) || pgErr.Code != "42P01":
		return fmt.Errorf("reading %s: %w", r.table(), err)
	case r.schema == "":
		return fmt.Errorf("reading %s: %w; the search_path does not reach Docket's tables: "+
			"set Expect.Schema to the schema they were migrated into (a client's Config.Schema)", r.table(), err)
	case r.ofClient:
		return fmt.Errorf("reading %s: %w; the client's Config.Schema %q holds no Docket tables", r.table(), err, r.schema)
	}
	return fmt.Errorf("reading %s: %w; Expect.Schema %q holds no Docket tables: "+
		"set it to the schema they were migrated into (a client's Config.Schema)", r.table(), err, r.schema)
}

// scopeKey is the partition key of scope: the tenant id, or "".
func scopeKey(scope docket.Scope) string {
	id, _ := scope.TenantID()
	return id
}

// candidates returns the runs e names: the run RunID (in any scope, so a
// run of the wrong scope is reported as such), or the runs of GraphID in
// Scope.
func (r reader) candidates(ctx context.Context, e Expect) ([]storedRun, error) {
	if e.RunID != "" {
		return r.read(ctx, "run_id = $1", e.RunID)
	}
	return r.read(ctx, "scope_key = $1 and graph_id = $2", scopeKey(e.Scope), e.GraphID)
}

// inScopes returns every run of the expectations' scopes, in insert order.
func (r reader) inScopes(ctx context.Context, expects []Expect) ([]storedRun, []docket.Scope, error) {
	var scopes []docket.Scope
	var keys []string
	for _, e := range expects {
		if !slices.Contains(scopes, e.Scope) {
			scopes = append(scopes, e.Scope)
			keys = append(keys, scopeKey(e.Scope))
		}
	}
	runs, err := r.read(ctx, "scope_key = any($1::text[])", keys)
	return runs, scopes, err
}
