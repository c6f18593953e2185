package main

import "time"

// sizes are the dimensions of every scenario.
type sizes struct {
	// Claim ceiling: a frozen backlog of CeilingRuns over CeilingTenants,
	// claimed by each count in Claimers until exhausted or CeilingBudget.
	CeilingRuns    int           `json:"ceiling_runs"`
	CeilingTenants int           `json:"ceiling_tenants"`
	Claimers       []int         `json:"claimers"`
	CeilingBudget  time.Duration `json:"ceiling_budget_ns"`
	// DrainRuns no-op runs drained end to end.
	DrainRuns int `json:"drain_runs"`
	// FairnessRuns in the hot/light backlog.
	FairnessRuns int `json:"fairness_runs"`
	// Scale: ScaleCalls measured claim calls on ScaleReady due runs, with
	// ScaleHistory extra done runs, and with ScalePartitions dormant
	// partitions in the ring.
	ScaleReady      int `json:"scale_ready_runs"`
	ScaleHistory    int `json:"scale_history_runs"`
	ScaleActive     int `json:"scale_active_partitions"`
	ScalePartitions int `json:"scale_partitions"`
	ScaleCalls      int `json:"scale_calls"`
	// ContentionBudget bounds the 16-claimer contention run.
	ContentionBudget time.Duration `json:"contention_budget_ns"`
	// FastRuns and SlowRuns shape the fast/slow scenario.
	FastRuns int `json:"fast_runs"`
	SlowRuns int `json:"slow_runs"`
	// Surge: CapacityRuns measure the drain capacity; arrivals last
	// SurgeArrivals with a burst of SurgeBurst in the middle, then steady
	// arrivals go on for SurgeObserve so recovery can be seen.
	CapacityRuns  int           `json:"capacity_runs"`
	SurgeArrivals time.Duration `json:"surge_arrivals_ns"`
	SurgeBurst    time.Duration `json:"surge_burst_ns"`
	SurgeObserve  time.Duration `json:"surge_observe_ns"`
	// Dormant: the backlog drains once among each count of DormantTenants
	// tenants holding one run due tomorrow, for at most DormantBudget, and
	// a Worker that finished stays idle for DormantIdle.
	DormantTenants []int         `json:"dormant_tenants"`
	DormantBudget  time.Duration `json:"dormant_budget_ns"`
	DormantIdle    time.Duration `json:"dormant_idle_ns"`
	// FleetRuns are drained by the fleet of small Workers.
	FleetRuns int `json:"fleet_runs"`
	// Rate: RateBusyRuns over the busy tenants and RateLimitedRuns of the
	// limited tenant, worked for RateWindow per point.
	RateBusyRuns    int           `json:"rate_busy_runs"`
	RateLimitedRuns int           `json:"rate_limited_runs"`
	RateWindow      time.Duration `json:"rate_window_ns"`
}

// fullSizes are the scorecard's standard dimensions.
func fullSizes() sizes {
	return sizes{
		CeilingRuns: 20000, CeilingTenants: 100, Claimers: []int{1, 2, 4, 8}, CeilingBudget: 15 * time.Second,
		DrainRuns:    20000,
		FairnessRuns: 4000,
		ScaleReady:   10000, ScaleHistory: 990000, ScaleActive: 10, ScalePartitions: 100000, ScaleCalls: 300,
		ContentionBudget: 10 * time.Second,
		FastRuns:         1800, SlowRuns: 200,
		CapacityRuns: 3000, SurgeArrivals: 20 * time.Second, SurgeBurst: 2 * time.Second, SurgeObserve: 20 * time.Second,
		DormantTenants: []int{0, 20000, 100000}, DormantBudget: 60 * time.Second, DormantIdle: 5 * time.Second,
		FleetRuns:    20000,
		RateBusyRuns: 200000, RateLimitedRuns: 2000, RateWindow: 30 * time.Second,
	}
}

// quickSizes scale every scenario down for a smoke run.
func quickSizes() sizes {
	return sizes{
		CeilingRuns: 4000, CeilingTenants: 100, Claimers: []int{1, 8}, CeilingBudget: 4 * time.Second,
		DrainRuns:    4000,
		FairnessRuns: 1000,
		ScaleReady:   5000, ScaleHistory: 95000, ScaleActive: 10, ScalePartitions: 10000, ScaleCalls: 100,
		ContentionBudget: 3 * time.Second,
		FastRuns:         450, SlowRuns: 50,
		CapacityRuns: 1000, SurgeArrivals: 8 * time.Second, SurgeBurst: time.Second, SurgeObserve: 6 * time.Second,
		DormantTenants: []int{0, 20000}, DormantBudget: 20 * time.Second, DormantIdle: 2 * time.Second,
		FleetRuns:    4000,
		RateBusyRuns: 40000, RateLimitedRuns: 600, RateWindow: 8 * time.Second,
	}
}
