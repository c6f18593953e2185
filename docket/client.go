// Package docket is the public facade of Docket for Go: a PostgreSQL run store
// whose single admission entrypoint, ClaimDue, is served by the Legacy or the
// TenantFair engine.
package docket

import (
	"context"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
)

// Client is a started run store bound to one fairness domain: the database
// and schema that the pool's connections resolve to.
type Client struct {
	pool    *pgxpool.Pool
	queries *gen.Queries
	config  Config
	engine  policy.ClaimPolicy
	logger  *slog.Logger
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
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tel, err := newTelemetry(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	c := &Client{
		pool:      pool,
		queries:   gen.New(pool),
		config:    cfg,
		engine:    engine,
		logger:    logger,
		telemetry: tel,
	}
	if err := verifySchema(ctx, c.queries); err != nil {
		return nil, err
	}
	if err := c.synchronizePolicy(ctx); err != nil {
		return nil, err
	}
	logger.InfoContext(ctx, "docket client started", "policy", engine.Name(), "tenant_mode", cfg.TenantMode.String())
	return c, nil
}

// Pool returns the pool the client runs on.
func (c *Client) Pool() *pgxpool.Pool { return c.pool }

// Policy returns the resolved admission engine.
func (c *Client) Policy() policy.ClaimPolicy { return c.engine }

// withTx binds the queries to the caller's transaction; a nil tx is refused
// with ErrInvalidArgument instead of panicking at the first statement.
func (c *Client) withTx(tx pgx.Tx) (*gen.Queries, error) {
	if tx == nil {
		return nil, invalidArgument("nil transaction")
	}
	return c.queries.WithTx(tx), nil
}
