package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// benchArgs are the arguments of every River job of the scorecard: the
// run's index in its book and its tenant (which River ignores).
type benchArgs struct {
	Run    int    `json:"run"`
	Tenant string `json:"tenant"`
}

// Kind implements river.JobArgs.
func (benchArgs) Kind() string { return "bench_run" }

// riverEnv is a River schema on a fresh database of its own.
type riverEnv struct {
	pool   *pgxpool.Pool
	driver *riverpgxv5.Driver
	// inserter is an insert-only client.
	inserter *river.Client[pgx.Tx]
	drop     func() error
}

// quietLogger discards River's own logs; the scorecard checks every
// outcome itself.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// openRiver clones the River template and opens a pool of maxConns
// connections and an insert-only client on it.
func openRiver(ctx context.Context, c *cluster, maxConns int) (*riverEnv, error) {
	db, drop, err := c.cloneDatabase(ctx, riverTemplate, string(engineRiver))
	if err != nil {
		return nil, err
	}
	env, err := openRiverOn(ctx, c, db, maxConns, nil, drop)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	return env, nil
}

// openRiverOn opens a pool of maxConns connections on database db, traced
// by tracer (nil: none), and an insert-only client on it; the environment's
// close closes the pool, then calls drop.
func openRiverOn(ctx context.Context, c *cluster, db string, maxConns int, tracer pgx.QueryTracer, drop func() error) (*riverEnv, error) {
	pool, err := c.openTracedPool(ctx, db, maxConns, tracer)
	if err != nil {
		return nil, err
	}
	driver := riverpgxv5.New(pool)
	inserter, err := river.NewClient(driver, &river.Config{SkipUnknownJobCheck: true, Logger: quietLogger()})
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &riverEnv{pool: pool, driver: driver, inserter: inserter, drop: drop}, nil
}

// insert inserts one job per run in order with COPY, in batches.
func (e *riverEnv) insert(ctx context.Context, runs []int, tenantOf func(int) string) error {
	for start := 0; start < len(runs); start += insertBatch {
		end := min(start+insertBatch, len(runs))
		params := make([]river.InsertManyParams, 0, end-start)
		for _, r := range runs[start:end] {
			params = append(params, river.InsertManyParams{Args: benchArgs{Run: r, Tenant: tenantOf(r)}})
		}
		if _, err := e.inserter.InsertManyFast(ctx, params); err != nil {
			return err
		}
	}
	return nil
}

// close closes the pool and drops the database.
func (e *riverEnv) close() error {
	e.pool.Close()
	return e.drop()
}
