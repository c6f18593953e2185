package docket

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/policy"
)

// Client is a started run store bound to one fairness domain: the database
// and schema that the pool's connections resolve to. It offers every method
// of Admin (the two share them: they are defined once, on the store both
// embed) and the engine's claim calls, inserts and holder writes.
type Client struct {
	// store holds what the calls Client shares with Admin need.
	*store
	config Config
	engine engine
	// tracer starts Docket's spans; nil without Config.TracerProvider.
	tracer trace.Tracer
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
	c := &Client{store: newStore(pool, cfg.TenantMode, cfg.Schema, cfg.Logger, tel), config: cfg, engine: engine, tracer: newTracer(cfg.TracerProvider)}
	if err := verifySchema(ctx, c.queries); err != nil {
		return nil, err
	}
	if err := c.synchronizePolicy(ctx); err != nil {
		return nil, err
	}
	c.logger.InfoContext(ctx, "docket client started", "policy", engine.Name(), "tenant_mode", cfg.TenantMode.String())
	return c, nil
}

// Pool returns the pool the client runs on.
func (c *Client) Pool() *pgxpool.Pool { return c.pool }

// Policy returns the resolved admission engine.
func (c *Client) Policy() policy.ClaimPolicy { return c.engine.configured }
