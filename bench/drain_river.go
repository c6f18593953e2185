package main

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
)

// riverDrain drains a book with one River client working the default
// queue.
type riverDrain struct {
	env    *riverEnv
	book   *book
	client *river.Client[pgx.Tx]
}

// riverFetch is the fetch configuration of River's drains.
type riverFetch struct {
	// Cooldown is River's FetchCooldown, Poll its FetchPollInterval.
	Cooldown time.Duration `json:"fetch_cooldown_ns"`
	Poll     time.Duration `json:"fetch_poll_interval_ns"`
}

// newRiverDrain opens a River database and a client of MaxWorkers
// drainConcurrency whose worker records into b and completes each job after
// its handler time.
func newRiverDrain(ctx context.Context, c *cluster, fetch riverFetch, b *book) (*riverDrain, error) {
	env, err := openRiver(ctx, c, drainPoolConns)
	if err != nil {
		return nil, err
	}
	return newRiverDrainOn(env, fetch, b, drainConcurrency)
}

// newRiverDrainOn is newRiverDrain on an environment already open, with a
// client of MaxWorkers concurrency; on error it closes env.
func newRiverDrainOn(env *riverEnv, fetch riverFetch, b *book, concurrency int) (*riverDrain, error) {
	d := &riverDrain{env: env, book: b}
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(d.work))
	var err error
	d.client, err = river.NewClient(env.driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: concurrency}},
		Workers:           workers,
		FetchCooldown:     fetch.Cooldown,
		FetchPollInterval: fetch.Poll,
		Logger:            quietLogger(),
	})
	if err != nil {
		return nil, errors.Join(err, env.close())
	}
	return d, nil
}

// work is the River worker.
func (d *riverDrain) work(ctx context.Context, job *river.Job[benchArgs]) error {
	if !sleepFor(ctx, d.book.begin(job.Args.Run)) {
		return ctx.Err()
	}
	return nil
}

func (d *riverDrain) insert(ctx context.Context, runs []int) error {
	return d.env.insert(ctx, runs, d.book.tenant)
}

func (d *riverDrain) start(ctx context.Context) error { return d.client.Start(ctx) }

func (d *riverDrain) finished(ctx context.Context) (int64, error) {
	var n int64
	err := d.env.pool.QueryRow(ctx, `select count(*) from river_job where state = 'completed'`).Scan(&n)
	return n, err
}

func (d *riverDrain) stop(ctx context.Context) error { return d.client.Stop(ctx) }

func (d *riverDrain) close() error { return d.env.close() }
