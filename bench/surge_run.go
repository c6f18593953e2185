package main

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// produce inserts the plan's arrivals on schedule, one batch per tick,
// recording each batch's commit time, and returns when every arrival is in.
func produce(ctx context.Context, t drainTarget, b *book, plan *surgePlan) error {
	tick := time.NewTicker(surgeTick)
	defer tick.Stop()
	t0 := time.Now()
	next := 0
	for next < len(plan.arrivals) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		elapsed := time.Since(t0)
		var batch []int
		for next < len(plan.arrivals) && plan.arrivals[next].at <= elapsed {
			batch = append(batch, plan.arrivals[next].run)
			next++
		}
		if len(batch) == 0 {
			continue
		}
		if err := t.insert(ctx, batch); err != nil {
			return fmt.Errorf("insert arrivals: %w", err)
		}
		b.markInserted(batch, time.Now())
	}
	return nil
}

// surgeOnce starts engine's worker on an empty database, feeds it the plan's
// arrivals and waits until every run is finished.
func surgeOnce(ctx context.Context, c *cluster, p *progress, engine engineName, b *book, plan *surgePlan) (began time.Time, err error) {
	t, err := newDrainTarget(ctx, c, engine, fastSlowCap, riverFetch{}, b)
	if err != nil {
		return began, err
	}
	defer func() { err = errors.Join(err, t.close()) }()
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	began = time.Now()
	if err := t.start(ctx); err != nil {
		return began, err
	}
	produced := make(chan error, 1)
	go func() { produced <- produce(ctx, t, b, plan) }()
	_, err = watchDrain(ctx, p, "surge "+string(engine), t, b, began)
	if err != nil {
		cancel()
	}
	err = errors.Join(err, <-produced)
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer stopCancel()
	return began, errors.Join(err, t.stop(stopCtx))
}
