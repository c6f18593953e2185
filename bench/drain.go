package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Drain watch settings.
const (
	// finishPoll is how often the database is asked whether every run is
	// finished once every handler has started; earlier, the in-memory
	// count is watched, so polling does not load the database.
	finishPoll = 5 * time.Millisecond
	// drainTimeout bounds one drain.
	drainTimeout = 5 * time.Minute
	// stopTimeout bounds stopping a worker.
	stopTimeout = 30 * time.Second
)

// drainTimes are the endpoints of one drain.
type drainTimes struct {
	// began is when the worker was started, finished when the database
	// first showed every run finished.
	began, finished time.Time
}

// elapsed is the drain time.
func (d drainTimes) elapsed() time.Duration { return d.finished.Sub(d.began) }

// rate is runs per second over the drain.
func (d drainTimes) rate(runs int) float64 { return float64(runs) / d.elapsed().Seconds() }

// drainBacklog inserts batches in order (each batch one cohort, recording
// its commit time), starts t and waits until every run of b is finished,
// printing progress every second. It stops t before returning.
func drainBacklog(ctx context.Context, p *progress, label string, t drainTarget, b *book, batches ...[]int) (res drainTimes, err error) {
	for _, batch := range batches {
		if err := t.insert(ctx, batch); err != nil {
			return res, fmt.Errorf("insert: %w", err)
		}
		b.markInserted(batch, time.Now())
	}
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	res.began = time.Now()
	if err := t.start(ctx); err != nil {
		return res, fmt.Errorf("start: %w", err)
	}
	res.finished, err = watchDrain(ctx, p, label, t, b, res.began)
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer stopCancel()
	return res, errors.Join(err, t.stop(stopCtx))
}

// watchDrain waits until every run has started, then until the database
// shows every run finished, and returns that time.
func watchDrain(ctx context.Context, p *progress, label string, t drainTarget, b *book, began time.Time) (time.Time, error) {
	total := int64(b.size())
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := int64(0), began
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("%s: %d of %d runs started: %w", label, b.handled.Load(), total, ctx.Err())
		case now := <-tick.C:
			n := b.handled.Load()
			p.logf("  %-28s %5.1fs  started %6d/%d  %6.0f runs/s", label, now.Sub(began).Seconds(), n, total,
				float64(n-last)/now.Sub(lastAt).Seconds())
			last, lastAt = n, now
		case <-b.all:
			waiting = false
		}
	}
	for {
		n, err := t.finished(ctx)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: count finished runs: %w", label, err)
		}
		if n >= total {
			return time.Now(), nil
		}
		if !sleepFor(ctx, finishPoll) {
			return time.Time{}, fmt.Errorf("%s: %d of %d runs finished: %w", label, n, total, ctx.Err())
		}
	}
}
