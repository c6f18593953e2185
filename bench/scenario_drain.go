package main

import (
	"context"
	"fmt"
)

// Drain scenario shape: no-op runs over drainTenants tenants; TenantFair's
// cap of drainCap does not bind in aggregate (100 tenants x 4 > 8 slots).
const (
	drainTenants = 100
	drainCap     = 4
)

// drainPoint is one engine's end-to-end drain.
type drainPoint struct {
	Engine        engineName `json:"engine"`
	Round         int        `json:"round"`
	Seconds       float64    `json:"seconds"`
	RunsPerSecond float64    `json:"runs_per_second"`
}

// drainResult is the end-to-end drain scenario.
type drainResult struct {
	Runs        int        `json:"runs"`
	Tenants     int        `json:"tenants"`
	Cap         int        `json:"tenant_fair_cap"`
	Concurrency int        `json:"concurrency"`
	River       riverFetch `json:"river_fetch"`
	Rounds      int        `json:"rounds"`
	// Points holds each engine's best round, All every round.
	Points []drainPoint `json:"points"`
	All    []drainPoint `json:"all_rounds"`
	// TenantFairVsRiver and LegacyVsRiver are drain rates over River's.
	TenantFairVsRiver float64 `json:"tenant_fair_vs_river"`
	LegacyVsRiver     float64 `json:"legacy_vs_river"`
	// ParkedVsTenantFair is TenantFair's drain in parked mode, with nothing
	// dormant, over its drain with the full-ring walk.
	ParkedVsTenantFair float64 `json:"parked_vs_tenant_fair"`
}

// rate is the reported runs/s of engine.
func (r *drainResult) rate(engine engineName) float64 {
	for _, pt := range r.Points {
		if pt.Engine == engine {
			return pt.RunsPerSecond
		}
	}
	return 0
}

// runDrain drains the same no-op backlog with a Docket Worker under each
// engine and with a River client.
func runDrain(ctx context.Context, c *cluster, o options, p *progress) (*drainResult, error) {
	fetch := riverFetch{Cooldown: o.riverCooldown, Poll: o.riverPoll}
	res := &drainResult{Runs: o.sizes.DrainRuns, Tenants: drainTenants, Cap: drainCap, Concurrency: drainConcurrency, River: fetch, Rounds: o.rounds}
	p.logf("end-to-end drain: %d no-op runs over %d tenants, concurrency %d, %d rounds", res.Runs, res.Tenants, res.Concurrency, o.rounds)
	engines := []engineName{engineTenantFair, engineTenantFairParked, engineLegacy, engineRiver}
	for round := 1; round <= o.rounds; round++ {
		for _, engine := range engines {
			b := newBook(res.Runs)
			runs := b.addManySpread(res.Runs, drainTenants, 0)
			b.seal()
			d, err := drainOnce(ctx, c, p, "drain "+string(engine), engine, drainCap, fetch, b, runs)
			if err != nil {
				return nil, fmt.Errorf("%s round %d: %w", engine, round, err)
			}
			pt := drainPoint{Engine: engine, Round: round, Seconds: d.elapsed().Seconds(), RunsPerSecond: d.rate(res.Runs)}
			res.All = append(res.All, pt)
			p.logf("  %-11s drained %d runs in %.2fs: %.0f runs/s", engine, res.Runs, pt.Seconds, pt.RunsPerSecond)
		}
	}
	rates := map[engineName]float64{}
	for _, engine := range engines {
		best := drainPoint{}
		for _, pt := range res.All {
			if pt.Engine == engine && pt.RunsPerSecond >= best.RunsPerSecond {
				best = pt
			}
		}
		res.Points = append(res.Points, best)
		rates[engine] = best.RunsPerSecond
	}
	res.TenantFairVsRiver = ratio(rates[engineTenantFair], rates[engineRiver])
	res.LegacyVsRiver = ratio(rates[engineLegacy], rates[engineRiver])
	res.ParkedVsTenantFair = ratio(rates[engineTenantFairParked], rates[engineTenantFair])
	return res, nil
}

// table renders the scenario.
func (r *drainResult) table() *table {
	t := newTable(fmt.Sprintf("2. End-to-end drain: %d no-op runs over %d tenants, concurrency %d, best of %d round(s) (Docket Worker, TenantFair cap %d; River client MaxWorkers %d, FetchCooldown %s, FetchPollInterval %s)",
		r.Runs, r.Tenants, r.Concurrency, r.Rounds, r.Cap, r.Concurrency, r.River.Cooldown, r.River.Poll),
		"engine", "drain s", "runs/s", "vs River")
	for _, pt := range r.Points {
		vs := "1.00"
		switch pt.Engine {
		case engineTenantFair:
			vs = f2(r.TenantFairVsRiver)
		case engineTenantFairParked:
			vs = f2(ratio(pt.RunsPerSecond, r.rate(engineRiver)))
		case engineLegacy:
			vs = f2(r.LegacyVsRiver)
		}
		t.add(string(pt.Engine), f2(pt.Seconds), f0(pt.RunsPerSecond), vs)
	}
	return t
}
