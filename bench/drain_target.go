package main

import (
	"context"
	"errors"
	"time"
)

// Worker settings every engine drains with.
const (
	// drainConcurrency is the concurrency of every drain (Worker Concurrency,
	// River MaxWorkers).
	drainConcurrency = 8
	// drainPoolConns leaves room for the workers' claims, commits,
	// heartbeats, LISTEN session and the scorecard's own checks.
	drainPoolConns = 2*drainConcurrency + 4
)

// drainTarget is one engine set up to drain a book: a Docket Worker or a
// River client, on a fresh database.
type drainTarget interface {
	// insert enqueues runs in order, due now.
	insert(ctx context.Context, runs []int) error
	// start starts working.
	start(ctx context.Context) error
	// finished counts the runs the database shows finished.
	finished(ctx context.Context) (int64, error)
	// stop stops working and waits for the handlers.
	stop(ctx context.Context) error
	// close drops the database.
	close() error
}

// sleepFor works for d, or until ctx ends; it reports whether d passed.
func sleepFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// newDrainTarget opens engine on a fresh database, set up to drain b:
// a Docket Worker with default cap maxActive (TenantFair only), or a River
// client with fetch.
func newDrainTarget(ctx context.Context, c *cluster, engine engineName, maxActive int, fetch riverFetch, b *book) (drainTarget, error) {
	if engine == engineRiver {
		return newRiverDrain(ctx, c, fetch, b)
	}
	return newDocketDrain(ctx, c, engine, maxActive, b)
}

// drainOnce builds a target for b, drains batches and drops the target.
func drainOnce(ctx context.Context, c *cluster, p *progress, label string, engine engineName, maxActive int, fetch riverFetch, b *book, batches ...[]int) (drainTimes, error) {
	t, err := newDrainTarget(ctx, c, engine, maxActive, fetch, b)
	if err != nil {
		return drainTimes{}, err
	}
	res, err := drainBacklog(ctx, p, label, t, b, batches...)
	return res, errors.Join(err, t.close())
}
