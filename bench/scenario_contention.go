package main

import (
	"context"
	"fmt"
)

// Contention scenario shape.
const (
	contentionClaimers = 16
	contentionDemand   = 1
)

// contentionPoint is one engine under 16 demand-one claimers.
type contentionPoint struct {
	Engine          engineName `json:"engine"`
	Calls           int        `json:"calls"`
	ContentionCalls int        `json:"lock_contention_calls"`
	ContentionShare float64    `json:"lock_contention_share"`
	ClaimsPerSecond float64    `json:"claims_per_second"`
	Call            latency    `json:"call"`
	Exhausted       bool       `json:"backlog_exhausted"`
	// CPU is the CPU time of the timed calls; ServerCPUPerClaimMs is the
	// server's share per claim (0 where /proc could not be read).
	CPU                 cpuUse  `json:"cpu"`
	ServerCPUPerClaimMs float64 `json:"server_cpu_ms_per_claim"`
}

// contentionResult is the contention scenario.
type contentionResult struct {
	Claimers int               `json:"claimers"`
	Demand   int               `json:"demand"`
	Runs     int               `json:"runs"`
	Tenants  int               `json:"tenants"`
	Points   []contentionPoint `json:"points"`
	// TenantFairVsLegacy is TenantFair's claims/s over Legacy's.
	TenantFairVsLegacy float64 `json:"tenant_fair_vs_legacy"`
}

// runContention runs 16 concurrent demand-one claim loops on the ceiling's
// backlog, for TenantFair, Legacy (the tenant-blind reference) and the walk
// floor (the least a call that keeps TenantFair's walk serializes).
func runContention(ctx context.Context, c *cluster, o options, p *progress) (*contentionResult, error) {
	sz := o.sizes
	res := &contentionResult{Claimers: contentionClaimers, Demand: contentionDemand, Runs: sz.CeilingRuns, Tenants: sz.CeilingTenants}
	p.logf("contention: %d claimers of demand %d on %d runs over %d tenants, budget %s",
		contentionClaimers, contentionDemand, sz.CeilingRuns, sz.CeilingTenants, sz.ContentionBudget)
	for _, engine := range []engineName{engineTenantFair, engineLegacy, engineWalkFloor} {
		setup := claimSetup{Engine: engine, Runs: sz.CeilingRuns, Tenants: sz.CeilingTenants,
			Claimers: contentionClaimers, Demand: contentionDemand}
		measure := measureClaims
		if engine == engineWalkFloor {
			measure = measureWalkFloor
		}
		r, err := measure(ctx, c, setup, sz.ContentionBudget)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", engine, err)
		}
		pt := contentionPoint{Engine: engine, Calls: len(r.Calls), ContentionCalls: r.Contention,
			ContentionShare: ratio(float64(r.Contention), float64(len(r.Calls))), ClaimsPerSecond: r.claimsPerSecond(),
			Call: summarize(r.Calls), Exhausted: r.Exhausted, CPU: r.CPU, ServerCPUPerClaimMs: perUnit(r.CPU.ServerMs, r.Claims)}
		res.Points = append(res.Points, pt)
		p.logf("  %-11s %d calls, %d lock_contention (%.2f%%), %.0f claims/s, call p50 %.2f ms p99 %.2f ms",
			engine, pt.Calls, pt.ContentionCalls, 100*pt.ContentionShare, pt.ClaimsPerSecond, pt.Call.P50Ms, pt.Call.P99Ms)
	}
	res.TenantFairVsLegacy = ratio(res.point(engineTenantFair).ClaimsPerSecond, res.point(engineLegacy).ClaimsPerSecond)
	return res, nil
}

// point is engine's point; the zero point when it did not run.
func (r *contentionResult) point(engine engineName) contentionPoint {
	for _, pt := range r.Points {
		if pt.Engine == engine {
			return pt
		}
	}
	return contentionPoint{}
}

// table renders the scenario.
func (r *contentionResult) table() *table {
	t := newTable(fmt.Sprintf("5. Contention: %d concurrent claimers of demand %d, %d due runs over %d tenants, claims kept",
		r.Claimers, r.Demand, r.Runs, r.Tenants),
		"engine", "calls", "lock_contention", "share", "claims/s", "call p50 ms", "call p99 ms", "exhausted",
		"server CPU ms/claim", "machine busy")
	for _, pt := range r.Points {
		t.add(string(pt.Engine), fmt.Sprint(pt.Calls), fmt.Sprint(pt.ContentionCalls), fmt.Sprintf("%.2f%%", 100*pt.ContentionShare),
			f0(pt.ClaimsPerSecond), f2(pt.Call.P50Ms), f2(pt.Call.P99Ms), fmt.Sprint(pt.Exhausted),
			cpuFigure(pt.ServerCPUPerClaimMs), busyFigure(pt.CPU))
	}
	return t
}
