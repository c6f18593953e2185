package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// docketDrain drains a book with one docket.Worker.
type docketDrain struct {
	env    *docketEnv
	book   *book
	worker *docket.Worker
	ran    chan error
}

// newDocketDrain opens engine (default cap maxActive) with a Worker of
// drainConcurrency whose handler records into b and completes each run
// after its handler time.
func newDocketDrain(ctx context.Context, c *cluster, engine engineName, maxActive int, b *book) (*docketDrain, error) {
	env, err := openDocket(ctx, c, engine, maxActive, drainPoolConns)
	if err != nil {
		return nil, err
	}
	return newDocketDrainOn(env, b, docket.WorkerConfig{Concurrency: drainConcurrency})
}

// newDocketDrainOn is newDocketDrain on an environment already open, with a
// Worker of cfg, whose Handler it sets; on error it closes env.
func newDocketDrainOn(env *docketEnv, b *book, cfg docket.WorkerConfig) (*docketDrain, error) {
	d := &docketDrain{env: env, book: b, ran: make(chan error, 1)}
	var err error
	cfg.Handler = d.handle
	cfg.OnEvent = d.event
	d.worker, err = docket.NewWorker(env.client, cfg)
	if err != nil {
		return nil, errors.Join(err, env.close())
	}
	return d, nil
}

// handle is the Worker's handler.
func (d *docketDrain) handle(ctx context.Context, job *docket.Job) docket.Result {
	r, err := runOf(job.RunID)
	if err != nil {
		return docket.Fail(err)
	}
	d.book.markClaimed(r, job.ClaimedAt)
	if !sleepFor(ctx, d.book.begin(r)) {
		return docket.Yield()
	}
	d.book.markReturned(r)
	return docket.Complete(nil)
}

// event records when each verdict was written.
func (d *docketDrain) event(ev docket.WorkerEvent) {
	if ev.Kind != docket.EventVerdict || ev.Outcome != docket.VerdictWritten {
		return
	}
	if r, err := runOf(ev.RunID); err == nil {
		d.book.markSettled(r)
	}
}

func (d *docketDrain) insert(ctx context.Context, runs []int) error {
	return insertDocketRuns(ctx, d.env.client, runs, d.book.tenant, time.Time{})
}

func (d *docketDrain) start(ctx context.Context) error {
	go func() { d.ran <- d.worker.Run(ctx) }()
	return nil
}

func (d *docketDrain) finished(ctx context.Context) (int64, error) {
	var n int64
	err := d.env.pool.QueryRow(ctx, `select count(*) from docket_runs where status = 'done'`).Scan(&n)
	return n, err
}

func (d *docketDrain) stop(ctx context.Context) error {
	if err := d.worker.Stop(ctx); err != nil {
		return fmt.Errorf("stop worker: %w", err)
	}
	return <-d.ran
}

func (d *docketDrain) close() error { return d.env.close() }
