package main

import "fmt"

// target is one scorecard target checked against figures of the same run.
type target struct {
	Name     string  `json:"name"`
	Measured float64 `json:"measured"`
	Bound    float64 `json:"bound"`
	// AtLeast says the measured value must be >= Bound (else <=).
	AtLeast bool `json:"at_least"`
	Met     bool `json:"met"`
	// WalkFloor is the same figure for the walk floor, for the one-claimer
	// target (zero elsewhere). A single claimer never waits for another
	// call, so no engine that keeps TenantFair's walk does better there,
	// and a floor that misses the bound shows the target out of reach in
	// that run. Under contention the floor bounds only engines that walk
	// once per call, which combined claims do not, so it is not shown.
	WalkFloor float64 `json:"walk_floor,omitempty"`
}

// withWalkFloor returns t with the walk floor's figure for it.
func (t target) withWalkFloor(floor float64) target {
	t.WalkFloor = floor
	return t
}

// check builds a target and evaluates it.
func check(name string, measured, bound float64, atLeast bool) target {
	met := measured <= bound
	if atLeast {
		met = measured >= bound
	}
	return target{Name: name, Measured: measured, Bound: bound, AtLeast: atLeast, Met: met}
}

// evaluateTargets checks every target whose scenario ran.
func evaluateTargets(r *results) []target {
	var ts []target
	if r.Ceiling != nil {
		ts = append(ts, check(fmt.Sprintf("TenantFair claims/s / Legacy claims/s at %d claimers", r.Ceiling.MaxClaimers),
			r.Ceiling.TenantFairVsLegacy, 0.8, true))
		ts = append(ts, check(fmt.Sprintf("TenantFair parked claims/s / TenantFair claims/s at %d claimers, nothing dormant", r.Ceiling.MaxClaimers),
			r.Ceiling.ParkedVsTenantFair, 0.9, true))
		if r.Ceiling.OneClaimerTenantFairVsLegacy > 0 {
			ts = append(ts, check(fmt.Sprintf("TenantFair claims/s / Legacy claims/s, one claimer of demand %d", r.Ceiling.Demand),
				r.Ceiling.OneClaimerTenantFairVsLegacy, 0.8, true).withWalkFloor(r.Ceiling.OneClaimerWalkFloorVsLegacy))
		}
	}
	if r.Contention != nil {
		ts = append(ts, check(fmt.Sprintf("TenantFair claims/s / Legacy claims/s, %d claimers of demand %d", r.Contention.Claimers, r.Contention.Demand),
			r.Contention.TenantFairVsLegacy, 0.6, true))
		ts = append(ts, check(fmt.Sprintf("TenantFair call p99 ms, %d claimers of demand %d", r.Contention.Claimers, r.Contention.Demand),
			r.Contention.point(engineTenantFair).Call.P99Ms, 30, false))
	}
	if r.Drain != nil {
		ts = append(ts, check("Worker drain runs/s (TenantFair) / River runs/s", r.Drain.TenantFairVsRiver, 1.0, true))
		ts = append(ts, check("Worker drain runs/s (Legacy) / River runs/s", r.Drain.LegacyVsRiver, 1.0, true))
		ts = append(ts, check("Worker drain runs/s (TenantFair parked) / Worker drain runs/s (TenantFair), nothing dormant", r.Drain.ParkedVsTenantFair, 0.9, true))
	}
	if r.Fairness != nil {
		for _, pt := range r.Fairness.Points {
			if pt.Engine == engineTenantFair && !pt.NoneAhead {
				ts = append(ts, check("TenantFair light p95 wait / drain time", pt.LightP95OverDrain, 0.10, false))
			}
		}
	}
	if r.Scale != nil {
		ts = append(ts, check("TenantFair call p50, 1,000,000 / 10,000 runs in the table", r.Scale.TableRatio, 1.5, false))
		ts = append(ts, check("TenantFair call p50, 100,000 / 10 partitions in the ring", r.Scale.PartitionRatio, 1.5, false))
	}
	if r.Dormant != nil {
		ts = append(ts, r.Dormant.targets()...)
	}
	if r.Fleet != nil {
		ts = append(ts, check(fmt.Sprintf("fleet of %d Workers x %d: runs/s (TenantFair) / River runs/s", r.Fleet.Members, r.Fleet.Concurrency),
			r.Fleet.TenantFairVsRiver, 1.0, true))
		if r.Fleet.VerdictBatchWaitMs > 0 {
			ts = append(ts, check(fmt.Sprintf("fleet of %d Workers x %d: runs/s (TenantFair, verdicts wait %g ms) / River runs/s",
				r.Fleet.Members, r.Fleet.Concurrency, r.Fleet.VerdictBatchWaitMs), r.Fleet.BatchedVsRiver, 1.0, true))
		}
		if r.Fleet.ClaimAhead > 0 {
			ts = append(ts, check(fmt.Sprintf("fleet of %d Workers x %d: runs/s (TenantFair, verdicts wait %g ms, %d claimed ahead) / River runs/s",
				r.Fleet.Members, r.Fleet.Concurrency, r.Fleet.VerdictBatchWaitMs, r.Fleet.ClaimAhead), r.Fleet.AheadVsRiver, 1.0, true))
		}
	}
	if r.Rate != nil {
		// The guarantee is exact (never above limit + burst in a second);
		// the rate alone is within 5 % of its limit over the window (its
		// first burst included); and the busy tenants lose no more than
		// the noise of a 2-core machine beside it.
		most := 0
		for _, pt := range r.Rate.Points {
			most = max(most, pt.MaxInOneSecond)
		}
		ts = append(ts, check(fmt.Sprintf("rate: most admissions of the limited tenant in any second (limit %d + burst %d)", r.Rate.Limit, r.Rate.Burst),
			float64(most), float64(r.Rate.Limit+r.Rate.Burst), false))
		ts = append(ts, check("rate: limited tenant alone, admissions/s / its limit", r.Rate.Accuracy, 0.95, true))
		ts = append(ts, check("rate: busy tenants' runs/s beside the limited tenant / alone", r.Rate.BusyRatio, 0.9, true))
	}
	return ts
}

// targetTable renders the targets.
func targetTable(ts []target) *table {
	t := newTable("Targets (ratios from this run; walk floor: the same ratio for the walk floor, which bounds a single claimer of any engine that keeps the walk)",
		"target", "measured", "bound", "met", "walk floor")
	for _, tg := range ts {
		bound := "<= " + f2(tg.Bound)
		if tg.AtLeast {
			bound = ">= " + f2(tg.Bound)
		}
		met := "no"
		if tg.Met {
			met = "yes"
		}
		floor := "-"
		if tg.WalkFloor > 0 {
			floor = f3(tg.WalkFloor)
		}
		t.add(tg.Name, f3(tg.Measured), bound, met, floor)
	}
	return t
}
