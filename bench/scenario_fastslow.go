package main

import (
	"context"
	"fmt"
	"time"
)

// Fast/slow scenario shape.
const (
	fastHandler     = time.Millisecond
	slowHandler     = 200 * time.Millisecond
	fastTenants     = 10
	fastSlowCap     = 4
	slowTenant      = "slow"
	fastTenantLabel = "fast-%02d"
)

// fastSlowPoint is one engine's fast cohort, alone and behind the slow one.
type fastSlowPoint struct {
	Engine        engineName `json:"engine"`
	AloneP95Ms    float64    `json:"fast_p95_wait_alone_ms"`
	BehindP95Ms   float64    `json:"fast_p95_wait_behind_slow_ms"`
	Slowdown      float64    `json:"slowdown"`
	AloneDrainS   float64    `json:"alone_drain_seconds"`
	BehindDrainS  float64    `json:"behind_drain_seconds"`
	SlowP95WaitMs float64    `json:"slow_p95_wait_ms"`
}

// fastSlowResult is the fast/slow scenario.
type fastSlowResult struct {
	FastRuns    int             `json:"fast_runs"`
	SlowRuns    int             `json:"slow_runs"`
	FastTenants int             `json:"fast_tenants"`
	Cap         int             `json:"tenant_fair_cap"`
	Concurrency int             `json:"concurrency"`
	Points      []fastSlowPoint `json:"points"`
}

// runFastSlow measures the fast cohort's waits alone and behind a slow
// cohort, under Legacy and TenantFair.
func runFastSlow(ctx context.Context, c *cluster, o options, p *progress) (*fastSlowResult, error) {
	sz := o.sizes
	res := &fastSlowResult{FastRuns: sz.FastRuns, SlowRuns: sz.SlowRuns, FastTenants: fastTenants, Cap: fastSlowCap, Concurrency: drainConcurrency}
	p.logf("fast/slow: %d fast runs (%s) over %d tenants, alone and behind %d slow runs (%s) of one tenant",
		sz.FastRuns, fastHandler, fastTenants, sz.SlowRuns, slowHandler)
	for _, engine := range []engineName{engineLegacy, engineTenantFair} {
		pt := fastSlowPoint{Engine: engine}
		alone := newBook(sz.FastRuns)
		fast := addFast(alone, sz.FastRuns)
		alone.seal()
		d, err := drainOnce(ctx, c, p, "fast alone "+string(engine), engine, fastSlowCap, riverFetch{}, alone, fast)
		if err != nil {
			return nil, fmt.Errorf("%s alone: %w", engine, err)
		}
		pt.AloneP95Ms, pt.AloneDrainS = ms(percentile(waitsOf(alone, fast, d.began), 95)), d.elapsed().Seconds()

		behind := newBook(sz.SlowRuns + sz.FastRuns)
		slow := behind.addMany(slowTenant, sz.SlowRuns, slowHandler)
		fast = addFast(behind, sz.FastRuns)
		behind.seal()
		d, err = drainOnce(ctx, c, p, "fast behind slow "+string(engine), engine, fastSlowCap, riverFetch{}, behind, slow, fast)
		if err != nil {
			return nil, fmt.Errorf("%s behind slow: %w", engine, err)
		}
		pt.BehindP95Ms, pt.BehindDrainS = ms(percentile(waitsOf(behind, fast, d.began), 95)), d.elapsed().Seconds()
		pt.SlowP95WaitMs = ms(percentile(waitsOf(behind, slow, d.began), 95))
		pt.Slowdown = ratio(pt.BehindP95Ms, pt.AloneP95Ms)
		res.Points = append(res.Points, pt)
		p.logf("  %-11s fast p95 alone %.0f ms, behind slow %.0f ms: slowdown %.2fx", engine, pt.AloneP95Ms, pt.BehindP95Ms, pt.Slowdown)
	}
	return res, nil
}

// addFast registers n fast runs round-robin over the fast tenants.
func addFast(b *book, n int) []int {
	runs := make([]int, n)
	for i := range runs {
		runs[i] = b.add(fmt.Sprintf(fastTenantLabel, i%fastTenants), fastHandler)
	}
	return runs
}

// table renders the scenario.
func (r *fastSlowResult) table() *table {
	t := newTable(fmt.Sprintf("6. Fast/slow: %d fast runs (%s) over %d tenants, alone and behind %d slow runs (%s, one tenant, inserted first); concurrency %d, TenantFair cap %d",
		r.FastRuns, fastHandler, r.FastTenants, r.SlowRuns, slowHandler, r.Concurrency, r.Cap),
		"engine", "fast p95 alone ms", "fast p95 behind slow ms", "slowdown", "drain alone s", "drain behind s")
	for _, pt := range r.Points {
		t.add(string(pt.Engine), f0(pt.AloneP95Ms), f0(pt.BehindP95Ms), f2(pt.Slowdown)+"x", f2(pt.AloneDrainS), f2(pt.BehindDrainS))
	}
	return t
}
