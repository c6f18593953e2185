package main

import (
	"context"
	"fmt"
	"slices"
)

// ceilingDemand is the demand of every claim call of the ceiling.
const ceilingDemand = 16

// ceilingPoint is one engine at one claimer count.
type ceilingPoint struct {
	Engine          engineName `json:"engine"`
	Round           int        `json:"round"`
	Claimers        int        `json:"claimers"`
	Claims          int        `json:"claims"`
	ClaimsPerSecond float64    `json:"claims_per_second"`
	Call            latency    `json:"call"`
	EmptyCalls      int        `json:"empty_calls"`
	ContentionCalls int        `json:"lock_contention_calls"`
	ElapsedSeconds  float64    `json:"elapsed_seconds"`
	Exhausted       bool       `json:"backlog_exhausted"`
}

// ceilingResult is the claim ceiling scenario.
type ceilingResult struct {
	Runs    int `json:"runs"`
	Tenants int `json:"tenants"`
	Demand  int `json:"demand"`
	Rounds  int `json:"rounds"`
	// Points holds each engine's best round at each claimer count, All
	// every round.
	Points []ceilingPoint `json:"points"`
	All    []ceilingPoint `json:"all_rounds"`
	// TenantFairVsLegacy is TenantFair's claims/s over Legacy's at the
	// highest claimer count.
	TenantFairVsLegacy float64 `json:"tenant_fair_vs_legacy_at_max_claimers"`
	// ParkedVsTenantFair is TenantFair in parked mode, with nothing
	// dormant, over TenantFair with the full-ring walk at MaxClaimers.
	ParkedVsTenantFair float64 `json:"tenant_fair_parked_vs_tenant_fair_at_max_claimers"`
	MaxClaimers        int     `json:"max_claimers"`
	// OneClaimerTenantFairVsLegacy is TenantFair's claims/s over Legacy's
	// with one claimer; zero when the claimer counts do not include one.
	OneClaimerTenantFairVsLegacy float64 `json:"tenant_fair_vs_legacy_one_claimer"`
	// OneClaimerWalkFloorVsLegacy is the walk floor's claims/s over
	// Legacy's with one claimer: what any engine that keeps the walk can
	// reach at most there; zero when the claimer counts do not include one.
	OneClaimerWalkFloorVsLegacy float64 `json:"walk_floor_vs_legacy_one_claimer"`
}

// ceilingEngines are the engines of the claim ceiling: TenantFair also in
// parked mode with nothing dormant, to show what parking costs.
var ceilingEngines = []engineName{engineTenantFair, engineTenantFairParked, engineLegacy, engineRiver}

// runCeiling measures direct claim loops of every engine at every claimer
// count, each on a fresh frozen backlog.
func runCeiling(ctx context.Context, c *cluster, o options, p *progress) (*ceilingResult, error) {
	sz := o.sizes
	res := &ceilingResult{Runs: sz.CeilingRuns, Tenants: sz.CeilingTenants, Demand: ceilingDemand, Rounds: o.rounds}
	p.logf("claim ceiling: %d runs over %d tenants, demand %d, claims kept, budget %s per point, %d rounds",
		sz.CeilingRuns, sz.CeilingTenants, ceilingDemand, sz.CeilingBudget, o.rounds)
	for round := 1; round <= o.rounds; round++ {
		if err := ceilingRound(ctx, c, sz, round, p, res); err != nil {
			return nil, fmt.Errorf("round %d: %w", round, err)
		}
	}
	for _, engine := range ceilingEngines {
		for _, n := range sz.Claimers {
			res.Points = append(res.Points, res.best(engine, n))
		}
	}
	if floor := res.best(engineWalkFloor, 1); floor.Engine != "" {
		res.Points = append(res.Points, floor)
	}
	res.MaxClaimers = sz.Claimers[len(sz.Claimers)-1]
	res.TenantFairVsLegacy = ratio(res.point(engineTenantFair, res.MaxClaimers).ClaimsPerSecond,
		res.point(engineLegacy, res.MaxClaimers).ClaimsPerSecond)
	res.ParkedVsTenantFair = ratio(res.point(engineTenantFairParked, res.MaxClaimers).ClaimsPerSecond,
		res.point(engineTenantFair, res.MaxClaimers).ClaimsPerSecond)
	res.OneClaimerTenantFairVsLegacy = ratio(res.point(engineTenantFair, 1).ClaimsPerSecond,
		res.point(engineLegacy, 1).ClaimsPerSecond)
	res.OneClaimerWalkFloorVsLegacy = ratio(res.point(engineWalkFloor, 1).ClaimsPerSecond,
		res.point(engineLegacy, 1).ClaimsPerSecond)
	return res, nil
}

// ceilingRound measures every engine at every claimer count once, and the
// walk floor with one claimer when the counts include one (the floor of a
// single claimer, which never waits for another call, bounds every engine
// that keeps the walk there).
func ceilingRound(ctx context.Context, c *cluster, sz sizes, round int, p *progress, res *ceilingResult) error {
	type point struct {
		engine   engineName
		claimers int
	}
	var points []point
	for _, engine := range ceilingEngines {
		for _, n := range sz.Claimers {
			points = append(points, point{engine, n})
		}
	}
	if slices.Contains(sz.Claimers, 1) {
		points = append(points, point{engineWalkFloor, 1})
	}
	for _, at := range points {
		setup := claimSetup{Engine: at.engine, Runs: sz.CeilingRuns, Tenants: sz.CeilingTenants, Claimers: at.claimers, Demand: ceilingDemand}
		measure := measureClaims
		if at.engine == engineWalkFloor {
			measure = measureWalkFloor
		}
		r, err := measure(ctx, c, setup, sz.CeilingBudget)
		if err != nil {
			return fmt.Errorf("%s with %d claimers: %w", at.engine, at.claimers, err)
		}
		pt := ceilingPoint{Engine: at.engine, Round: round, Claimers: at.claimers, Claims: r.Claims, ClaimsPerSecond: r.claimsPerSecond(),
			Call: summarize(r.Calls), EmptyCalls: r.Empty, ContentionCalls: r.Contention,
			ElapsedSeconds: r.Elapsed.Seconds(), Exhausted: r.Exhausted}
		res.All = append(res.All, pt)
		p.logf("  %-11s %d claimers: %7.0f claims/s, call p50 %.2f ms p99 %.2f ms, %d calls (%d empty, %d lock_contention)",
			at.engine, at.claimers, pt.ClaimsPerSecond, pt.Call.P50Ms, pt.Call.P99Ms, pt.Call.Calls, pt.EmptyCalls, pt.ContentionCalls)
	}
	return nil
}

// best returns the round of engine at claimers with the most claims/s.
func (r *ceilingResult) best(engine engineName, claimers int) ceilingPoint {
	var best ceilingPoint
	for _, pt := range r.All {
		if pt.Engine == engine && pt.Claimers == claimers && pt.ClaimsPerSecond >= best.ClaimsPerSecond {
			best = pt
		}
	}
	return best
}

// point returns the point of engine at claimers.
func (r *ceilingResult) point(engine engineName, claimers int) ceilingPoint {
	for _, pt := range r.Points {
		if pt.Engine == engine && pt.Claimers == claimers {
			return pt
		}
	}
	return ceilingPoint{}
}

// table renders the scenario.
func (r *ceilingResult) table() *table {
	t := newTable(fmt.Sprintf("1. Claim ceiling: %d due runs over %d tenants, demand %d, claims kept, best of %d round(s) (River: riverpgxv5 Executor.JobGetAvailable, default queue, MaxToLock %d)",
		r.Runs, r.Tenants, r.Demand, r.Rounds, r.Demand),
		"engine", "claimers", "claims/s", "call p50 ms", "call p99 ms", "calls", "empty calls", "lock_contention", "exhausted")
	for _, pt := range r.Points {
		t.add(string(pt.Engine), fmt.Sprint(pt.Claimers), f0(pt.ClaimsPerSecond), f2(pt.Call.P50Ms), f2(pt.Call.P99Ms),
			fmt.Sprint(pt.Call.Calls), fmt.Sprint(pt.EmptyCalls), fmt.Sprint(pt.ContentionCalls), fmt.Sprint(pt.Exhausted))
	}
	return t
}
