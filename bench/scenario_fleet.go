package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Fleet scenario shape: many small Workers, as a deployment of many pods
// with a few slots each runs them. TenantFair's cap of drainCap does not
// bind in aggregate (100 tenants x 4 > 32 slots).
const (
	fleetMembers     = 16
	fleetConcurrency = 2
	fleetHandler     = 5 * time.Millisecond
	fleetTenants     = 100
	// fleetClaimAhead is the default ClaimAhead of the row that claims
	// ahead: enough held runs to keep both handlers of a member busy
	// through a claim call as long as the longest gather (20 ms), 2 x 20 ms
	// / 5 ms.
	fleetClaimAhead = 8
)

// fleetRow is one configuration of the fleet scenario: an engine, and for
// Docket the Workers' VerdictBatchWait and ClaimAhead.
type fleetRow struct {
	engine      engineName
	verdictWait time.Duration
	claimAhead  int
}

// fleetRows are the fleet scenario's configurations: each engine with its
// verdicts written at once; TenantFair with verdicts that wait verdictWait
// for a batch (none when it is 0); and TenantFair with those verdicts and
// claimAhead runs claimed ahead of each Worker's handlers (none when it is
// 0). The other Docket rows hold as many runs ahead as each Worker decides
// (the default). Every Docket row keeps the scenario's concurrency of
// handlers.
func fleetRows(verdictWait time.Duration, claimAhead int) []fleetRow {
	rows := []fleetRow{{engine: engineTenantFair}}
	if verdictWait > 0 {
		rows = append(rows, fleetRow{engine: engineTenantFair, verdictWait: verdictWait})
	}
	if claimAhead > 0 {
		rows = append(rows, fleetRow{engine: engineTenantFair, verdictWait: verdictWait, claimAhead: claimAhead})
	}
	return append(rows, fleetRow{engine: engineTenantFairParked}, fleetRow{engine: engineLegacy}, fleetRow{engine: engineRiver})
}

// name labels r in progress lines and tables.
func (r fleetRow) name() string {
	name := string(r.engine)
	if r.verdictWait > 0 {
		name += fmt.Sprintf(", verdicts wait %s", r.verdictWait)
	}
	if r.claimAhead > 0 {
		name += fmt.Sprintf(", %d claimed ahead", r.claimAhead)
	} else if r.engine != engineRiver {
		name += ", ahead as measured"
	}
	return name
}

// fleetPoint is one configuration's fleet drain.
type fleetPoint struct {
	Engine engineName `json:"engine"`
	// VerdictBatchWaitMs is the Docket Workers' VerdictBatchWait
	// (verdictWait); 0 writes each verdict at once.
	VerdictBatchWaitMs float64 `json:"verdict_batch_wait_ms"`
	verdictWait        time.Duration
	// ClaimAhead is the Docket Workers' ClaimAhead; 0 claims none ahead.
	ClaimAhead    int     `json:"claim_ahead"`
	Round         int     `json:"round"`
	Seconds       float64 `json:"seconds"`
	RunsPerSecond float64 `json:"runs_per_second"`
	// Claim is the latency of the fleet's claim calls from start to stop:
	// the Worker's claim batch, River's JobGetAvailable fetch.
	Claim latency `json:"claim"`
	// Contention counts the Docket claim calls refused for policy lock
	// contention (docket.admission.contentions); River has none.
	Contention int64 `json:"lock_contention"`
	// CPU is the CPU time of the drain; ServerCPUPerRunMs and
	// BenchCPUPerRunMs are the server's and the fleet's (the bench
	// process's) per run, 0 where /proc could not be read.
	CPU               cpuUse  `json:"cpu"`
	ServerCPUPerRunMs float64 `json:"server_cpu_ms_per_run"`
	BenchCPUPerRunMs  float64 `json:"bench_cpu_ms_per_run"`
}

// fleetResult is the fleet scenario.
type fleetResult struct {
	Runs        int          `json:"runs"`
	Tenants     int          `json:"tenants"`
	Members     int          `json:"members"`
	Concurrency int          `json:"concurrency_per_member"`
	HandlerMs   float64      `json:"handler_ms"`
	Cap         int          `json:"tenant_fair_cap"`
	River       riverFetch   `json:"river_fetch"`
	Rounds      int          `json:"rounds"`
	Points      []fleetPoint `json:"points"`
	All         []fleetPoint `json:"all_rounds"`
	// TenantFairVsRiver and TenantFairVsLegacy are TenantFair's drain rate
	// (full-ring walk, verdicts written at once) over River's and over
	// Legacy's; BatchedVsRiver is TenantFair's with verdicts waiting
	// VerdictBatchWaitMs over River's (0 when that row did not run), and
	// AheadVsRiver TenantFair's with those verdicts and ClaimAhead runs
	// claimed ahead over River's (0 when that row did not run).
	TenantFairVsRiver  float64 `json:"tenant_fair_vs_river"`
	TenantFairVsLegacy float64 `json:"tenant_fair_vs_legacy"`
	VerdictBatchWaitMs float64 `json:"verdict_batch_wait_ms"`
	BatchedVsRiver     float64 `json:"tenant_fair_batched_vs_river"`
	ClaimAhead         int     `json:"claim_ahead"`
	AheadVsRiver       float64 `json:"tenant_fair_ahead_vs_river"`
}

// row is pt's configuration.
func (pt fleetPoint) row() fleetRow {
	return fleetRow{engine: pt.Engine, verdictWait: pt.verdictWait, claimAhead: pt.ClaimAhead}
}

// contention is the point's lock contention count, "-" for River.
func (pt fleetPoint) contention() string {
	if pt.Engine == engineRiver {
		return "-"
	}
	return fmt.Sprint(pt.Contention)
}

// rate is the reported runs/s of row.
func (r *fleetResult) rate(row fleetRow) float64 {
	for _, pt := range r.Points {
		if pt.row() == row {
			return pt.RunsPerSecond
		}
	}
	return 0
}

// runFleet drains the same backlog of 5 ms runs with a fleet of small
// Docket Workers under each engine and with a fleet of River clients, each
// member on a pool of its own.
func runFleet(ctx context.Context, c *cluster, o options, p *progress) (*fleetResult, error) {
	fetch := riverFetch{Cooldown: o.riverCooldown, Poll: o.riverPoll}
	res := &fleetResult{Runs: o.sizes.FleetRuns, Tenants: fleetTenants, Members: fleetMembers, Concurrency: fleetConcurrency,
		HandlerMs: ms(fleetHandler), Cap: drainCap, River: fetch, Rounds: o.rounds}
	p.logf("fleet: %d runs (%s) over %d tenants, %d members of concurrency %d, each on its own pool, %d rounds",
		res.Runs, fleetHandler, res.Tenants, res.Members, res.Concurrency, o.rounds)
	rows := fleetRows(o.fleetVerdictWait, o.fleetClaimAhead)
	for round := 1; round <= o.rounds; round++ {
		for _, row := range rows {
			pt, err := fleetOnce(ctx, c, p, row, res.Runs, fetch)
			if err != nil {
				return nil, fmt.Errorf("%s round %d: %w", row.name(), round, err)
			}
			pt.Round = round
			res.All = append(res.All, pt)
			p.logf("  %-18s drained %d runs in %.2fs: %.0f runs/s, %d claim calls, p50 %.2f ms, p99 %.2f ms, lock_contention %s",
				row.name(), res.Runs, pt.Seconds, pt.RunsPerSecond, pt.Claim.Calls, pt.Claim.P50Ms, pt.Claim.P99Ms, pt.contention())
		}
	}
	for _, row := range rows {
		best := fleetPoint{}
		for _, pt := range res.All {
			if pt.row() == row && pt.RunsPerSecond >= best.RunsPerSecond {
				best = pt
			}
		}
		res.Points = append(res.Points, best)
	}
	river := res.rate(fleetRow{engine: engineRiver})
	res.TenantFairVsRiver = ratio(res.rate(fleetRow{engine: engineTenantFair}), river)
	res.TenantFairVsLegacy = ratio(res.rate(fleetRow{engine: engineTenantFair}), res.rate(fleetRow{engine: engineLegacy}))
	if o.fleetVerdictWait > 0 {
		res.VerdictBatchWaitMs = ms(o.fleetVerdictWait)
		res.BatchedVsRiver = ratio(res.rate(fleetRow{engine: engineTenantFair, verdictWait: o.fleetVerdictWait}), river)
	}
	if o.fleetClaimAhead > 0 {
		res.ClaimAhead = o.fleetClaimAhead
		res.AheadVsRiver = ratio(res.rate(fleetRow{engine: engineTenantFair, verdictWait: o.fleetVerdictWait, claimAhead: o.fleetClaimAhead}), river)
	}
	return res, nil
}

// fleetOnce builds a fleet of row on a fresh database, drains runs over
// fleetTenants tenants with it and drops it. The Docket clients' metrics go
// to a manual reader, read once after the drain, for the lock contention
// count.
func fleetOnce(ctx context.Context, c *cluster, p *progress, row fleetRow, runs int, fetch riverFetch) (pt fleetPoint, err error) {
	engine := row.engine
	b := newBook(runs)
	backlog := b.addManySpread(runs, fleetTenants, fleetHandler)
	b.seal()
	names := docketClaimStatements()
	if engine == engineRiver {
		names = []string{riverFetchStatement}
	}
	s := fleetSetup{engine: engine, members: fleetMembers, concurrency: fleetConcurrency, maxActive: drainCap, fetch: fetch,
		verdictWait: row.verdictWait, claimAhead: row.claimAhead, tracer: newCallTracer(names...)}
	reader := sdkmetric.NewManualReader()
	if engine != engineRiver {
		s.meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer func() { err = errors.Join(err, s.meter.Shutdown(context.WithoutCancel(ctx))) }()
	}
	f, err := newFleetDrain(ctx, c, s, b)
	if err != nil {
		return pt, err
	}
	// The backlog is inserted before the first sample, so the CPU
	// figures are the drain's alone.
	if err := f.insert(ctx, backlog); err != nil {
		return pt, errors.Join(fmt.Errorf("insert: %w", err), f.close())
	}
	b.markInserted(backlog, time.Now())
	meter := c.cpu()
	before := meter.sample()
	d, err := drainBacklog(ctx, p, "fleet "+row.name(), f, b)
	use := meter.sample().since(before)
	calls := s.tracer.durations()
	if err = errors.Join(err, f.close()); err != nil {
		return pt, err
	}
	if len(calls) == 0 {
		return pt, fmt.Errorf("no claim call of %v was traced", names)
	}
	pt = fleetPoint{Engine: engine, VerdictBatchWaitMs: ms(row.verdictWait), verdictWait: row.verdictWait, ClaimAhead: row.claimAhead, Seconds: d.elapsed().Seconds(), RunsPerSecond: d.rate(runs), Claim: summarize(calls),
		CPU: use, ServerCPUPerRunMs: perUnit(use.ServerMs, runs), BenchCPUPerRunMs: perUnit(use.BenchMs, runs)}
	if s.meter != nil {
		rm, err := collect(ctx, reader)
		if err != nil {
			return pt, err
		}
		pt.Contention = counterSum(rm, "docket.admission.contentions")
	}
	return pt, nil
}

// table renders the scenario.
func (r *fleetResult) table() *table {
	t := newTable(fmt.Sprintf("9. Fleet: %d runs (%s handler) over %d tenants, %d members of concurrency %d, each with its own pool and client, best of %d round(s) (Docket Workers, TenantFair cap %d; River clients MaxWorkers %d, FetchCooldown %s, FetchPollInterval %s); claim call = the statement's round trip on its connection, pool wait excluded (Docket: the Worker's claim batch; River: JobGetAvailable)",
		r.Runs, fleetHandler, r.Tenants, r.Members, r.Concurrency, r.Rounds, r.Cap, r.Concurrency, r.River.Cooldown, r.River.Poll),
		"engine", "drain s", "runs/s", "claim calls", "claim p50 ms", "claim p99 ms", "lock_contention", "vs River", "vs Legacy",
		"server CPU ms/run", "bench CPU ms/run", "machine busy")
	for _, pt := range r.Points {
		t.add(pt.row().name(), f2(pt.Seconds), f0(pt.RunsPerSecond), fmt.Sprint(pt.Claim.Calls), f2(pt.Claim.P50Ms), f2(pt.Claim.P99Ms),
			pt.contention(), f2(ratio(pt.RunsPerSecond, r.rate(fleetRow{engine: engineRiver}))),
			f2(ratio(pt.RunsPerSecond, r.rate(fleetRow{engine: engineLegacy}))),
			cpuFigure(pt.ServerCPUPerRunMs), cpuFigure(pt.BenchCPUPerRunMs), busyFigure(pt.CPU))
	}
	return t
}
