package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// dormantOnce loads dormant tenants into a fresh database of engine, then
// drains the active backlog with a Worker for at most budget, counting its
// claim calls through a manual metric reader, which costs the drain nothing
// measurable. A drain that finished is followed by idle, an idle window
// whose claim calls are counted too.
func dormantOnce(ctx context.Context, c *cluster, p *progress, engine dormantEngine, dormant int, budget, idle time.Duration) (pt dormantPoint, err error) {
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
	if engine.parks {
		parked := time.Now()
		if pt.ParkCalls, err = parkDormant(ctx, env); err != nil {
			return pt, errors.Join(err, env.close())
		}
		pt.ParkSeconds = time.Since(parked).Seconds()
	}

	b := newBook(dormantActive * dormantPerTenant)
	runs := b.addManySpread(dormantActive*dormantPerTenant, dormantActive, 0)
	b.seal()
	d, err := newDocketDrainOn(env, b, docket.WorkerConfig{Concurrency: drainConcurrency})
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
	// The drain's calls are counted from here: parking calls are not theirs.
	before, err := collect(ctx, reader)
	if err != nil {
		return pt, err
	}
	began := time.Now()
	if err := d.start(ctx); err != nil {
		return pt, fmt.Errorf("start: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		defer cancel()
		err = errors.Join(err, d.stop(stopCtx))
	}()
	label := fmt.Sprintf("dormant %s %d", engine.name, dormant)
	finished, elapsed, err := drainWithin(ctx, p, label, d, b, began, budget)
	if err != nil {
		return pt, err
	}
	pt.Finished, pt.Complete, pt.Seconds = finished, finished == int64(b.size()), elapsed.Seconds()
	pt.RunsPerSecond = ratio(float64(finished), pt.Seconds)
	rm, err := collect(ctx, reader)
	if err != nil {
		return pt, err
	}
	since := func(name string) int64 { return counterSum(rm, name) - counterSum(before, name) }
	pt.Calls, pt.SweepCalls, pt.Claims = since("docket.claim.calls"), since("docket.worker.sweep_calls"), since("docket.claim.outcomes")
	pt.CallsPerSecond = ratio(float64(pt.Calls), pt.Seconds)
	if engine.name != engineLegacy {
		pt.InspectionsPerClaimAtMost = ratio(float64(pt.Calls*policy.InspectionsPerCall), float64(pt.Claims))
	}
	if pt.Complete {
		pt.IdleCallsPerSecond, err = idleCalls(ctx, reader, counterSum(rm, "docket.claim.calls"), idle)
	}
	return pt, err
}

// idleCalls lets the Worker run on for window after its backlog is done and
// returns its claim calls per second over the window; calls is the count
// before it.
func idleCalls(ctx context.Context, reader *sdkmetric.ManualReader, calls int64, window time.Duration) (float64, error) {
	if !sleepFor(ctx, window) {
		return 0, ctx.Err()
	}
	rm, err := collect(ctx, reader)
	if err != nil {
		return 0, err
	}
	return ratio(float64(counterSum(rm, "docket.claim.calls")-calls), window.Seconds()), nil
}

// collect reads every metric of reader.
func collect(ctx context.Context, reader *sdkmetric.ManualReader) (metricdata.ResourceMetrics, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		return rm, fmt.Errorf("collect metrics: %w", err)
	}
	return rm, nil
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

// parkDormant makes claim calls until every loaded dormant tenant is parked
// (nothing else is in the ring yet) and returns how many it took: about one
// revolution of S inspections per call.
func parkDormant(ctx context.Context, env *docketEnv) (int, error) {
	const checkEvery = 64
	for calls := 0; ; calls++ {
		if calls%checkEvery == 0 {
			var awake int
			if err := env.pool.QueryRow(ctx, `select count(*) from docket_claim_schedule
				 where unfinished_count > 0 and parked_until is null`).Scan(&awake); err != nil {
				return calls, fmt.Errorf("awake ring: %w", err)
			}
			if awake == 0 {
				return calls, nil
			}
		}
		if _, err := env.client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now(), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 10}); err != nil {
			return calls, fmt.Errorf("parking call: %w", err)
		}
	}
}

// drainWithin waits until every run of b is finished or budget has passed
// since began, when d was started; it returns the finished runs and the
// time they took.
func drainWithin(ctx context.Context, p *progress, label string, d *docketDrain, b *book, began time.Time, budget time.Duration) (int64, time.Duration, error) {
	watchCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	at, err := watchDrain(watchCtx, p, label, d, b, began)
	switch {
	case err == nil:
		return int64(b.size()), at.Sub(began), nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		elapsed := time.Since(began)
		finished, err := d.finished(ctx)
		return finished, elapsed, err
	}
	return 0, 0, err
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

// switchOnOnce loads n dormant tenants and the active backlog into a fresh
// TenantFair database with parking off, starts a Worker on the backlog, and
// times PutClaimPolicyParking(on), which parks every dormant partition
// before it returns. It reports the seconds the switch took and how many
// partitions were parked when it returned.
func switchOnOnce(ctx context.Context, c *cluster, n int) (seconds float64, parked int64, err error) {
	env, err := openDocketConfig(ctx, c, engineTenantFair, docketConfig(engineTenantFair, drainCap), drainPoolConns)
	if err != nil {
		return 0, 0, err
	}
	if err := loadDormant(ctx, env, n); err != nil {
		return 0, 0, errors.Join(fmt.Errorf("load %d dormant tenants: %w", n, err), env.close())
	}
	b := newBook(dormantActive * dormantPerTenant)
	runs := b.addManySpread(dormantActive*dormantPerTenant, dormantActive, 0)
	b.seal()
	d, err := newDocketDrainOn(env, b, docket.WorkerConfig{Concurrency: drainConcurrency})
	if err != nil {
		return 0, 0, errors.Join(err, env.close())
	}
	defer func() { err = errors.Join(err, d.close()) }()
	if err := d.insert(ctx, runs); err != nil {
		return 0, 0, fmt.Errorf("insert: %w", err)
	}
	if err := d.start(ctx); err != nil {
		return 0, 0, fmt.Errorf("start: %w", err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
		defer cancel()
		err = errors.Join(err, d.stop(stopCtx))
	}()
	began := time.Now()
	if _, err := env.client.PutClaimPolicyParking(ctx, true, docket.ClaimPolicyWriteOptions{}); err != nil {
		return 0, 0, fmt.Errorf("switch on: %w", err)
	}
	seconds = time.Since(began).Seconds()
	if err := env.pool.QueryRow(ctx, `select count(*) from docket_claim_schedule where parked_until is not null`).Scan(&parked); err != nil {
		return seconds, 0, fmt.Errorf("parked count: %w", err)
	}
	return seconds, parked, nil
}
