// Package docket is the public facade of Docket for Go: a PostgreSQL run store
// whose single admission entrypoint, ClaimDue, is served by the Legacy or the
// TenantFair engine.
package docket

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
)

// Client is a started run store bound to one fairness domain: the database
// and schema that the pool's connections resolve to.
type Client struct {
	pool *pgxpool.Pool
	// queries run on pool, each statement scoped to config.Schema when set.
	queries *gen.Queries
	// names qualifies statements with config.Schema; nil when it is empty.
	names  *qualifier
	config Config
	engine engine
	logger *slog.Logger
	// telemetry holds the metric instruments, created once by Open or NewAdmin.
	telemetry *telemetry
}

// Open validates cfg, verifies the schema version and shape, synchronizes the
// claim policy row for the configured engine and returns a ready Client. Any
// failure starts nothing.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Client, error) {
	engine, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if pool == nil {
		return nil, invalidConfig("nil pool")
	}
	tel, err := newTelemetry(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	c := newClient(pool, cfg, tel)
	c.engine = engine
	if err := verifySchema(ctx, c.queries); err != nil {
		return nil, err
	}
	if err := c.synchronizePolicy(ctx); err != nil {
		return nil, err
	}
	c.logger.InfoContext(ctx, "docket client started", "policy", engine.Name(), "tenant_mode", cfg.TenantMode.String())
	return c, nil
}

// newClient binds pool and cfg; Open and NewAdmin finish it. Without
// Config.Logger the client logs nowhere.
func newClient(pool *pgxpool.Pool, cfg Config, tel *telemetry) *Client {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{pool: pool, config: cfg, logger: logger, telemetry: tel}
	if cfg.Schema != "" {
		c.names = newQualifier(cfg.Schema)
	}
	c.queries = gen.New(c.scopedOn(pool, false))
	return c
}

// scopedOn returns db as the generated code's executor: db itself, or, when
// Config.Schema is set, db with each statement scoped to that schema;
// borrowed marks the app's own transaction, whose search_path is restored.
func (c *Client) scopedOn(db batchSender, borrowed bool) gen.DBTX {
	if c.config.Schema == "" {
		return db.(gen.DBTX)
	}
	return scopedDB{db: db, names: c.names, borrowed: borrowed}
}

// qualified is sql with Docket's relations in Config.Schema, when set.
func (c *Client) qualified(sql string) string {
	if c.names == nil {
		return sql
	}
	return c.names.qualify(sql)
}

// inTx runs fn in a transaction of the client's own, its statements scoped
// to Config.Schema when it is set.
func (c *Client) inTx(ctx context.Context, fn func(q *gen.Queries) error) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		return fn(gen.New(c.scopedOn(tx, false)))
	})
}

// Pool returns the pool the client runs on.
func (c *Client) Pool() *pgxpool.Pool { return c.pool }

// Policy returns the resolved admission engine.
func (c *Client) Policy() policy.ClaimPolicy { return c.engine.ClaimPolicy }

// withTx binds the queries to the caller's transaction; a nil tx is refused
// with ErrInvalidArgument instead of panicking at the first statement.
func (c *Client) withTx(tx pgx.Tx) (*gen.Queries, error) {
	if tx == nil {
		return nil, invalidArgument("nil transaction")
	}
	return gen.New(c.scopedOn(tx, true)), nil
}
