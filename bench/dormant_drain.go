package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketrun/docket-go/policy"
)

// dormantOnce loads dormant tenants into a fresh database of engine, then
// drains the active backlog with a Worker for at most budget, counting its
// claim calls through a manual metric reader, which costs the drain nothing
// measurable.
func dormantOnce(ctx context.Context, c *cluster, p *progress, engine dormantEngine, dormant int, budget time.Duration) (pt dormantPoint, err error) {
	pt = dormantPoint{Engine: engine.name, Label: engine.label, Dormant: dormant}
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { err = errors.Join(err, provider.Shutdown(context.WithoutCancel(ctx))) }()
	cfg := engine.config
	cfg.MeterProvider = provider
	env, err := openDocketConfig(ctx, c, engine.name, cfg, drainPoolConns)
	if err != nil {
		return pt, err
	}
	loaded := time.Now()
	if err := loadDormant(ctx, env, dormant); err != nil {
		return pt, errors.Join(fmt.Errorf("load %d dormant tenants: %w", dormant, err), env.close())
	}
	pt.LoadSeconds = time.Since(loaded).Seconds()

	b := newBook(dormantActive * dormantPerTenant)
	runs := b.addManySpread(dormantActive*dormantPerTenant, dormantActive, 0)
	b.seal()
	d, err := newDocketDrainOn(env, b)
	if err != nil {
		return pt, err
	}
	defer func() { err = errors.Join(err, d.close()) }()
	if err := d.insert(ctx, runs); err != nil {
		return pt, fmt.Errorf("insert: %w", err)
	}
	b.markInserted(runs, time.Now())
	if err := env.pool.QueryRow(ctx, `select count(*) from docket_claim_schedule where unfinished_count > 0`).Scan(&pt.RingPositions); err != nil {
		return pt, fmt.Errorf("ring size: %w", err)
	}
	label := fmt.Sprintf("dormant %s %d", engine.name, dormant)
	finished, elapsed, err := drainWithin(ctx, p, label, d, b, budget)
	if err != nil {
		return pt, err
	}
	pt.Finished, pt.Complete, pt.Seconds = finished, finished == int64(b.size()), elapsed.Seconds()
	pt.RunsPerSecond = ratio(float64(finished), pt.Seconds)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return pt, fmt.Errorf("collect metrics: %w", err)
	}
	pt.Calls, pt.SweepCalls, pt.Claims = counterSum(rm, "docket.claim.calls"), counterSum(rm, "docket.worker.sweep_calls"), counterSum(rm, "docket.claim.outcomes")
	pt.CallsPerSecond = ratio(float64(pt.Calls), pt.Seconds)
	if engine.name != engineLegacy {
		pt.InspectionsPerClaimAtMost = ratio(float64(pt.Calls*policy.InspectionsPerCall), float64(pt.Claims))
	}
	return pt, nil
}

// loadDormant creates the partitions of the active tenants and of n
// dormant tenants, the active ones spread evenly among the dormant ones
// (ring positions follow creation order), then inserts one run due
// tomorrow for each dormant tenant in one statement, whose triggers count
// them into the ring, and refreshes statistics. The active tenants' runs
// come later through the public batch insert.
func loadDormant(ctx context.Context, env *docketEnv, n int) error {
	total := n + dormantActive
	stride := total / dormantActive
	if err := env.exec(ctx, `insert into docket_claim_partitions (scope_key)
		select case when g % $2::integer = 0 and g / $2::integer < $3::integer
		            then 't' || lpad((g / $2::integer)::text, 3, '0')
		            else 'p' || lpad(g::text, 6, '0') end
		  from generate_series(0, $1::integer - 1) g
		 order by g`, total, stride, dormantActive); err != nil {
		return fmt.Errorf("partitions: %w", err)
	}
	if err := env.exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select 'f' || g, 'p' || lpad(g::text, 6, '0'), 'bench', 'v1', 'running', '{}', now() + interval '1 day'
		  from generate_series(0, $1::integer - 1) g
		 where not (g % $2::integer = 0 and g / $2::integer < $3::integer)`, total, stride, dormantActive); err != nil {
		return fmt.Errorf("dormant runs: %w", err)
	}
	return env.exec(ctx, "vacuum analyze")
}

// drainWithin starts d and waits until every run of b is finished or
// budget has passed since the start; it returns the finished runs and the
// time they took, and stops d.
func drainWithin(ctx context.Context, p *progress, label string, d *docketDrain, b *book, budget time.Duration) (finished int64, elapsed time.Duration, err error) {
	began := time.Now()
	if err := d.start(ctx); err != nil {
		return 0, 0, fmt.Errorf("start: %w", err)
	}
	watchCtx, cancel := context.WithTimeout(ctx, budget)
	at, err := watchDrain(watchCtx, p, label, d, b, began)
	cancel()
	switch {
	case err == nil:
		finished, elapsed = int64(b.size()), at.Sub(began)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		elapsed = time.Since(began)
		finished, err = d.finished(ctx)
	}
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer stopCancel()
	return finished, elapsed, errors.Join(err, d.stop(stopCtx))
}

// counterSum adds every point of the integer counter name.
func counterSum(rm metricdata.ResourceMetrics, name string) int64 {
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
				for _, dp := range sum.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}
