package docket

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// store is one fairness domain's run store without an engine: everything
// the calls an Admin offers need, and all an Admin holds. A Client embeds it
// and adds the configured engine.
type store struct {
	pool *pgxpool.Pool
	// queries run on pool, each statement scoped to the schema when set.
	queries *dbgen.Queries
	// names qualifies statements with the schema; nil when none is set.
	names *qualifier
	// tenantMode decides whether the tenantless scope may be addressed.
	tenantMode TenantMode
	logger     *slog.Logger
	// telemetry holds the metric instruments, created once by Open or NewAdmin.
	telemetry *telemetry
}

// newStore binds pool to the domain in schema ("" for whatever the pool's
// search_path resolves to) under tenantMode. A nil logger logs nowhere.
func newStore(pool *pgxpool.Pool, tenantMode TenantMode, schema string, logger *slog.Logger, tel *telemetry) *store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	st := &store{pool: pool, tenantMode: tenantMode, logger: logger, telemetry: tel}
	if schema != "" {
		st.names = newQualifier(schema)
	}
	st.queries = dbgen.New(st.scopedOn(pool, false))
	return st
}

// scopedOn returns db as the generated code's executor: db itself, or, when
// a schema is set, db with each statement scoped to that schema; borrowed
// marks the app's own transaction, whose search_path is restored.
func (c *store) scopedOn(db batchSender, borrowed bool) dbgen.DBTX {
	if c.names == nil {
		return db.(dbgen.DBTX)
	}
	return scopedDB{db: db, names: c.names, borrowed: borrowed}
}

// qualified is sql with Docket's relations in the schema, when set.
func (c *store) qualified(sql string) string {
	if c.names == nil {
		return sql
	}
	return c.names.qualify(sql)
}

// inTx runs fn in a transaction of the store's own, its statements scoped
// to the schema when it is set.
func (c *store) inTx(ctx context.Context, fn func(q *dbgen.Queries) error) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		return fn(dbgen.New(c.scopedOn(tx, false)))
	})
}

// withTx binds the queries to the caller's transaction; a nil tx is refused
// with ErrInvalidArgument instead of panicking at the first statement.
func (c *store) withTx(tx pgx.Tx) (*dbgen.Queries, error) {
	if tx == nil {
		return nil, invalidArgument("nil transaction")
	}
	return dbgen.New(c.scopedOn(tx, true)), nil
}
