package main

import (
	"context"
	"fmt"
	"time"
)

// Surge measurement settings.
const (
	surgeHandler = 5 * time.Millisecond
	// surgeWindow is the width of the arrival windows recovery is judged on.
	surgeWindow = 500 * time.Millisecond
	// surgeRecoveryFactor bounds a recovered window's p95 by this multiple
	// of the pre-burst p95.
	surgeRecoveryFactor = 1.5
	// surgeSustain is how many consecutive windows must stay within the
	// bound for the waits to count as recovered.
	surgeSustain = 4
)

// surgeWindowStat is the steady tenants' p95 wait over one arrival window.
type surgeWindowStat struct {
	FromSeconds float64 `json:"from_seconds"`
	Runs        int     `json:"runs"`
	P95Ms       float64 `json:"p95_ms"`
}

// surgePoint is one engine through the surge.
type surgePoint struct {
	Engine      engineName `json:"engine"`
	PreP95Ms    float64    `json:"steady_p95_before_ms"`
	DuringP95Ms float64    `json:"steady_p95_during_ms"`
	AfterP95Ms  float64    `json:"steady_p95_after_ms"`
	BurstP95Ms  float64    `json:"burst_p95_ms"`
	// RecoverySeconds is the time from the burst's end to the start of the
	// first arrival window that begins surgeSustain consecutive windows
	// whose steady p95 is within surgeRecoveryFactor x PreP95Ms; Recovered
	// is false when no such run of windows came before the observation
	// ended.
	RecoverySeconds float64           `json:"recovery_seconds"`
	Recovered       bool              `json:"recovered"`
	Windows         []surgeWindowStat `json:"windows"`
}

// surgeResult is the surge scenario.
type surgeResult struct {
	// Capacity is runs/s drained from a backlog per engine; the arrivals
	// are planned on the lower one, so both engines see the same schedule.
	Capacity        map[engineName]float64 `json:"capacity_runs_per_second"`
	PlannedCapacity float64                `json:"planned_capacity_runs_per_second"`
	SteadyRate      float64                `json:"steady_runs_per_second"`
	BurstRate       float64                `json:"burst_runs_per_second"`
	SteadyRuns      int                    `json:"steady_runs"`
	BurstRuns       int                    `json:"burst_runs"`
	HandlerMs       float64                `json:"handler_ms"`
	PeriodSeconds   float64                `json:"arrival_seconds"`
	ObserveSeconds  float64                `json:"observed_until_seconds"`
	BurstFromS      float64                `json:"burst_from_seconds"`
	BurstToS        float64                `json:"burst_to_seconds"`
	WindowMs        float64                `json:"window_ms"`
	Cap             int                    `json:"tenant_fair_cap"`
	Points          []surgePoint           `json:"points"`
}

// surgeEngines are the engines of the surge scenario.
var surgeEngines = []engineName{engineLegacy, engineTenantFair}

// runSurge measures each engine's drain capacity, then feeds both the same
// steady arrivals with a burst in the middle.
func runSurge(ctx context.Context, c *cluster, o options, p *progress) (*surgeResult, error) {
	sz := o.sizes
	res := &surgeResult{Capacity: map[engineName]float64{}, HandlerMs: ms(surgeHandler), PeriodSeconds: sz.SurgeArrivals.Seconds(),
		WindowMs: ms(surgeWindow), Cap: fastSlowCap}
	p.logf("surge: measuring drain capacity (%d runs, handler %s)", sz.CapacityRuns, surgeHandler)
	for _, engine := range surgeEngines {
		b := newBook(sz.CapacityRuns)
		runs := make([]int, sz.CapacityRuns)
		for i := range runs {
			runs[i] = b.add(capacityTenant(i), surgeHandler)
		}
		b.seal()
		d, err := drainOnce(ctx, c, p, "capacity "+string(engine), engine, fastSlowCap, riverFetch{}, b, runs)
		if err != nil {
			return nil, fmt.Errorf("%s capacity: %w", engine, err)
		}
		res.Capacity[engine] = d.rate(sz.CapacityRuns)
		p.logf("  %-11s capacity %.0f runs/s", engine, res.Capacity[engine])
	}
	res.PlannedCapacity = min(res.Capacity[engineLegacy], res.Capacity[engineTenantFair])
	for _, engine := range surgeEngines {
		b := newBook(0)
		plan := planSurge(b, res.PlannedCapacity, sz.SurgeArrivals, sz.SurgeBurst, sz.SurgeObserve, surgeHandler)
		b.seal()
		res.SteadyRate, res.BurstRate = plan.steadyRate, plan.burstRate
		res.SteadyRuns, res.BurstRuns = len(plan.steady), len(plan.burst)
		res.BurstFromS, res.BurstToS, res.ObserveSeconds = plan.burstFrom.Seconds(), plan.burstTo.Seconds(), plan.observeEnd.Seconds()
		p.logf("  %-11s arrivals: %.0f runs/s steady over %d tenants for %s, burst of %.0f runs/s from one tenant during %.1fs-%.1fs",
			engine, plan.steadyRate, surgeSteadyCount, sz.SurgeArrivals, plan.burstRate, plan.burstFrom.Seconds(), plan.burstTo.Seconds())
		if _, err := surgeOnce(ctx, c, p, engine, b, plan); err != nil {
			return nil, fmt.Errorf("%s surge: %w", engine, err)
		}
		pt := surgeOf(engine, b, plan)
		res.Points = append(res.Points, pt)
		p.logf("  %-11s steady p95 before %.1f ms, during %.1f ms, after %.1f ms; %s",
			engine, pt.PreP95Ms, pt.DuringP95Ms, pt.AfterP95Ms, recoveryText(pt))
	}
	return res, nil
}

// capacityTenant spreads the capacity backlog over the surge's tenants.
func capacityTenant(i int) string {
	if i%(surgeSteadyCount+1) == surgeSteadyCount {
		return surgeBurstTenant
	}
	return fmt.Sprintf(surgeSteadyTenant, i%(surgeSteadyCount+1))
}

// surgeOf computes one engine's figures: steady waits by planned arrival
// time, in the three phases and in fixed windows.
func surgeOf(engine engineName, b *book, plan *surgePlan) surgePoint {
	pt := surgePoint{Engine: engine}
	arrivedAt := make(map[int]time.Duration, len(plan.arrivals))
	for _, a := range plan.arrivals {
		arrivedAt[a.run] = a.at
	}
	var pre, during, after []time.Duration
	windows := make([][]time.Duration, int((plan.observeEnd+surgeWindow-1)/surgeWindow))
	for _, r := range plan.steady {
		w, at := b.wait(r, time.Time{}), arrivedAt[r]
		switch {
		case at < plan.burstFrom:
			pre = append(pre, w)
		case at < plan.burstTo:
			during = append(during, w)
		case at < plan.end:
			after = append(after, w)
		}
		windows[at/surgeWindow] = append(windows[at/surgeWindow], w)
	}
	pt.PreP95Ms, pt.DuringP95Ms, pt.AfterP95Ms = ms(percentile(pre, 95)), ms(percentile(during, 95)), ms(percentile(after, 95))
	pt.BurstP95Ms = ms(percentile(waitsOf(b, plan.burst, time.Time{}), 95))
	for i, ws := range windows {
		pt.Windows = append(pt.Windows, surgeWindowStat{FromSeconds: (time.Duration(i) * surgeWindow).Seconds(), Runs: len(ws), P95Ms: ms(percentile(ws, 95))})
	}
	pt.RecoverySeconds, pt.Recovered = recovery(pt.Windows, plan.burstTo, surgeRecoveryFactor*pt.PreP95Ms, surgeSustain)
	return pt
}

// recovery finds the first window starting at or after burstTo that
// begins sustain consecutive windows with p95 within limitMs, and returns
// its start minus burstTo.
func recovery(windows []surgeWindowStat, burstTo time.Duration, limitMs float64, sustain int) (float64, bool) {
	first, within := -1, 0
	for i, w := range windows {
		if w.FromSeconds < burstTo.Seconds() {
			continue
		}
		if w.P95Ms > limitMs {
			first, within = -1, 0
			continue
		}
		if first < 0 {
			first = i
		}
		if within++; within == sustain {
			return windows[first].FromSeconds - burstTo.Seconds(), true
		}
	}
	return 0, false
}

// recoveryText describes a point's recovery.
func recoveryText(pt surgePoint) string {
	if !pt.Recovered {
		return "not recovered before the arrivals ended"
	}
	return fmt.Sprintf("recovered %.2fs after the burst", pt.RecoverySeconds)
}

// table renders the scenario.
func (r *surgeResult) table() *table {
	t := newTable(fmt.Sprintf("7. Surge: capacity %s runs/s (legacy) / %s (tenant_fair); %.0f runs/s steady over %d tenants for %.0fs (observed to %.0fs), burst %.0f runs/s from one tenant %.1f-%.1fs; handler %s, concurrency %d, cap %d; recovery: steady p95 back within %.1fx the pre-burst p95 for %d consecutive %s windows",
		f0(r.Capacity[engineLegacy]), f0(r.Capacity[engineTenantFair]), r.SteadyRate, surgeSteadyCount, r.PeriodSeconds, r.ObserveSeconds,
		r.BurstRate, r.BurstFromS, r.BurstToS, surgeHandler, drainConcurrency, r.Cap, surgeRecoveryFactor, surgeSustain, surgeWindow),
		"engine", "steady p95 before ms", "during ms", "after ms", "burst p95 ms", "recovery s")
	for _, pt := range r.Points {
		rec := fmt.Sprintf("> %.0f", r.ObserveSeconds-r.BurstToS)
		if pt.Recovered {
			rec = f1(pt.RecoverySeconds)
		}
		t.add(string(pt.Engine), f1(pt.PreP95Ms), f1(pt.DuringP95Ms), f1(pt.AfterP95Ms), f0(pt.BurstP95Ms), rec)
	}
	return t
}
