package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// Fairness scenario shape: the hot tenant holds hotShare of the backlog and
// is inserted first; fairnessLightTenants split the rest.
const (
	hotShare             = 0.6
	fairnessLightTenants = 19
	fairnessHandler      = 5 * time.Millisecond
	fairnessCap          = 4
	hotTenant            = "hot"
)

// fairnessPoint is one engine's drain of the hot/light backlog.
type fairnessPoint struct {
	Engine engineName `json:"engine"`
	// NoneAhead marks the TenantFair row whose Worker holds no run ahead
	// of its handlers (WorkerTuning.ClaimAhead NoClaimAhead); every other
	// Docket row runs the default WorkerConfig.
	NoneAhead    bool    `json:"none_ahead,omitempty"`
	DrainSeconds float64 `json:"drain_seconds"`
	// LightP95WaitMs is the 95th percentile wait over every light run;
	// LightP95OverDrain divides it by the drain time.
	LightP95WaitMs    float64 `json:"light_p95_wait_ms"`
	LightP95OverDrain float64 `json:"light_p95_over_drain"`
	// LightFirstP95Ms is the 95th percentile over light tenants of the wait
	// of each tenant's first run to start (time to first service).
	LightFirstP95Ms        float64 `json:"light_first_start_p95_ms"`
	LightFirstP95OverDrain float64 `json:"light_first_start_p95_over_drain"`
	HotP95WaitMs           float64 `json:"hot_p95_wait_ms"`
	// JainAll is Jain's index over all tenants' mean waits, JainLight over
	// the light tenants' only.
	JainAll   float64 `json:"jain_all_tenants"`
	JainLight float64 `json:"jain_light_tenants"`
	// HotHolding is how the hot tenant's runs held its cap (Docket
	// engines only): how many were admitted and how many in a handler, on
	// average, from its first claim to its last verdict.
	HotHolding *holding `json:"hot_holding,omitempty"`
	// MeanWaitMs is each tenant's mean wait.
	MeanWaitMs map[string]float64 `json:"mean_wait_ms_by_tenant"`
}

// fairnessResult is the tenant fairness scenario.
type fairnessResult struct {
	Runs         int             `json:"runs"`
	HotRuns      int             `json:"hot_runs"`
	LightTenants int             `json:"light_tenants"`
	HandlerMs    float64         `json:"handler_ms"`
	Cap          int             `json:"tenant_fair_cap"`
	Concurrency  int             `json:"concurrency"`
	Points       []fairnessPoint `json:"points"`
}

// runFairness drains the hot/light backlog under Legacy, TenantFair and
// River (tenant-blind).
func runFairness(ctx context.Context, c *cluster, o options, p *progress) (*fairnessResult, error) {
	total := o.sizes.FairnessRuns
	hot := int(float64(total) * hotShare)
	res := &fairnessResult{Runs: total, HotRuns: hot, LightTenants: fairnessLightTenants, HandlerMs: ms(fairnessHandler),
		Cap: fairnessCap, Concurrency: drainConcurrency}
	p.logf("tenant fairness: hot tenant %d runs first, then %d light tenants sharing %d, handler %s, cap %d",
		hot, fairnessLightTenants, total-hot, fairnessHandler, fairnessCap)
	fetch := riverFetch{Cooldown: o.riverCooldown, Poll: o.riverPoll}
	rows := []fairnessRow{{engine: engineLegacy}, {engine: engineTenantFair}, {engine: engineTenantFair, noneAhead: true}, {engine: engineRiver}}
	for _, row := range rows {
		engine := row.engine
		b := newBook(total)
		hotRuns := b.addMany(hotTenant, hot, fairnessHandler)
		var lightRuns []int
		for i := 0; i < total-hot; i++ {
			lightRuns = append(lightRuns, b.add(lightTenant(i%fairnessLightTenants), fairnessHandler))
		}
		b.seal()
		d, err := row.drain(ctx, c, p, fetch, b, hotRuns, lightRuns)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", row.name(), err)
		}
		pt := fairnessOf(engine, b, d, hotRuns, lightRuns)
		pt.NoneAhead = row.noneAhead
		res.Points = append(res.Points, pt)
		p.logf("  %-11s drain %.2fs, light p95 %.0f ms (%.3f of drain), light first-start p95 %.0f ms, Jain %.3f",
			row.name(), pt.DrainSeconds, pt.LightP95WaitMs, pt.LightP95OverDrain, pt.LightFirstP95Ms, pt.JainAll)
	}
	return res, nil
}

// fairnessRow is one drain of the fairness scenario: an engine, and for
// TenantFair whether its Worker holds no run ahead of its handlers, which
// shows what held runs cost the hot tenant's cap.
type fairnessRow struct {
	engine    engineName
	noneAhead bool
}

// name labels r in progress lines and tables.
func (r fairnessRow) name() string {
	if r.noneAhead {
		return string(r.engine) + ", none ahead"
	}
	return string(r.engine)
}

// drain drains the hot runs, then the light ones, on a fresh database.
func (r fairnessRow) drain(ctx context.Context, c *cluster, p *progress, fetch riverFetch, b *book, hotRuns, lightRuns []int) (drainTimes, error) {
	label := "fairness " + r.name()
	if !r.noneAhead {
		return drainOnce(ctx, c, p, label, r.engine, fairnessCap, fetch, b, hotRuns, lightRuns)
	}
	env, err := openDocket(ctx, c, r.engine, fairnessCap, drainPoolConns)
	if err != nil {
		return drainTimes{}, err
	}
	t, err := newDocketDrainOn(env, b, docket.WorkerConfig{Concurrency: drainConcurrency, Tuning: docket.WorkerTuning{ClaimAhead: docket.NoClaimAhead}})
	if err != nil {
		return drainTimes{}, err
	}
	res, err := drainBacklog(ctx, p, label, t, b, hotRuns, lightRuns)
	return res, errors.Join(err, t.close())
}

// lightTenant is the name of light tenant i.
func lightTenant(i int) string { return fmt.Sprintf("light-%02d", i) }

// fairnessOf computes one engine's figures from its book.
func fairnessOf(engine engineName, b *book, d drainTimes, hotRuns, lightRuns []int) fairnessPoint {
	drain := d.elapsed()
	pt := fairnessPoint{Engine: engine, DrainSeconds: drain.Seconds(), MeanWaitMs: map[string]float64{}}
	lightWaits := waitsOf(b, lightRuns, d.began)
	pt.LightP95WaitMs = ms(percentile(lightWaits, 95))
	pt.LightP95OverDrain = ratio(pt.LightP95WaitMs, ms(drain))
	pt.HotP95WaitMs = ms(percentile(waitsOf(b, hotRuns, d.began), 95))

	byTenant := map[string][]time.Duration{}
	for _, r := range append(append([]int{}, hotRuns...), lightRuns...) {
		byTenant[b.tenant(r)] = append(byTenant[b.tenant(r)], b.wait(r, d.began))
	}
	var all, light []float64
	var firsts []time.Duration
	for tenant, waits := range byTenant {
		m := ms(mean(waits))
		pt.MeanWaitMs[tenant] = m
		all = append(all, m)
		if tenant != hotTenant {
			light = append(light, m)
			firsts = append(firsts, percentile(waits, 0))
		}
	}
	pt.JainAll, pt.JainLight = jain(all), jain(light)
	pt.LightFirstP95Ms = ms(percentile(firsts, 95))
	pt.LightFirstP95OverDrain = ratio(pt.LightFirstP95Ms, ms(drain))
	if h, ok := b.holdingOf(hotRuns); ok {
		pt.HotHolding = &h
	}
	return pt
}

// waitsOf returns the waits of runs in a drain that began at began.
func waitsOf(b *book, runs []int, began time.Time) []time.Duration {
	waits := make([]time.Duration, len(runs))
	for i, r := range runs {
		waits[i] = b.wait(r, began)
	}
	return waits
}

// table renders the scenario.
func (r *fairnessResult) table() *table {
	t := newTable(fmt.Sprintf("3. Tenant fairness: hot tenant %d runs inserted first, then %d light tenants sharing %d runs; handler %s, concurrency %d, TenantFair cap %d",
		r.HotRuns, r.LightTenants, r.Runs-r.HotRuns, time.Duration(r.HandlerMs*float64(time.Millisecond)), r.Concurrency, r.Cap),
		"engine", "drain s", "light p95 ms", "light p95 / drain", "light first-start p95 / drain", "hot p95 ms", "Jain (all 20)", "Jain (19 light)",
		"hot admitted (mean)", "hot in handler (mean)", "hot admitted out of a handler")
	for _, pt := range r.Points {
		admitted, inHandler, held := "-", "-", "-"
		if h := pt.HotHolding; h != nil {
			admitted, inHandler, held = f2(h.MeanAdmitted), f2(h.MeanInHandler), fmt.Sprintf("%.1f%%", 100*h.HeldShare)
		}
		name := fairnessRow{engine: pt.Engine, noneAhead: pt.NoneAhead}.name()
		t.add(name, f2(pt.DrainSeconds), f0(pt.LightP95WaitMs), f3(pt.LightP95OverDrain),
			f3(pt.LightFirstP95OverDrain), f0(pt.HotP95WaitMs), f3(pt.JainAll), f3(pt.JainLight), admitted, inHandler, held)
	}
	return t
}
