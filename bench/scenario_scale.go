package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Scale scenario settings.
const (
	scaleDemand      = 16
	scaleTenants     = 100
	scaleWarmups     = 5
	scaleTracedCalls = 30
)

// scalePoint is one TenantFair configuration of the scale scenario.
type scalePoint struct {
	Label       string  `json:"label"`
	Runs        int     `json:"runs_in_table"`
	ReadyRuns   int     `json:"ready_runs"`
	Partitions  int     `json:"partitions_in_ring"`
	Active      int     `json:"partitions_with_due_work"`
	LoadSeconds float64 `json:"load_seconds"`
	Call        latency `json:"call"`
	// ClaimsPerCall and ClaimsPerSecond are over the timed calls.
	ClaimsPerCall   float64 `json:"claims_per_call"`
	ClaimsPerSecond float64 `json:"claims_per_second"`
	// Traced* come from traced calls right after the timed ones: mean
	// inspections per call and mean call time per inspection.
	TracedInspectionsPerCall float64 `json:"traced_inspections_per_call"`
	TracedMsPerInspection    float64 `json:"traced_ms_per_inspection"`
}

// scaleResult is the scale scenario.
type scaleResult struct {
	Demand int          `json:"demand"`
	Points []scalePoint `json:"points"`
	// TableRatio and PartitionRatio divide the large configuration's call
	// p50 by its baseline's; PerInspectionPartitionRatio does the same for
	// the traced time per inspection.
	TableRatio                  float64 `json:"table_p50_ratio"`
	PartitionRatio              float64 `json:"partition_p50_ratio"`
	PerInspectionPartitionRatio float64 `json:"partition_per_inspection_ratio"`
}

// scaleConfig is one configuration to load and measure.
type scaleConfig struct {
	label      string
	ready      int
	history    int
	tenants    int // tenants of the due runs (table configurations)
	partitions int // ring size (partition configurations); 0 for table ones
	active     int
}

// scaleSlice is how many timed calls one configuration makes before the
// other of its pair takes a turn: interleaving the pair keeps background
// load from favouring either side of a ratio.
const scaleSlice = 25

// runScale measures TenantFair call latency on a small and a large table,
// and on a small and a large ring; each pair is loaded side by side and
// measured in alternating slices.
func runScale(ctx context.Context, c *cluster, o options, p *progress) (*scaleResult, error) {
	sz := o.sizes
	pairs := [][2]scaleConfig{
		{
			{label: "table: " + strconv.Itoa(sz.ScaleReady) + " runs", ready: sz.ScaleReady, tenants: scaleTenants},
			{label: "table: " + strconv.Itoa(sz.ScaleReady+sz.ScaleHistory) + " runs", ready: sz.ScaleReady, history: sz.ScaleHistory, tenants: scaleTenants},
		},
		{
			{label: "ring: " + strconv.Itoa(sz.ScaleActive) + " partitions", ready: sz.ScaleReady, partitions: sz.ScaleActive, active: sz.ScaleActive},
			{label: "ring: " + strconv.Itoa(sz.ScalePartitions) + " partitions", ready: sz.ScaleReady, partitions: sz.ScalePartitions, active: sz.ScaleActive},
		},
	}
	res := &scaleResult{Demand: scaleDemand}
	p.logf("scale: TenantFair claim calls of demand %d, %d timed calls per configuration in slices of %d, claims kept",
		scaleDemand, sz.ScaleCalls, scaleSlice)
	for _, pair := range pairs {
		points, err := measurePair(ctx, c, pair, sz.ScaleCalls, p)
		if err != nil {
			return nil, err
		}
		res.Points = append(res.Points, points...)
	}
	res.TableRatio = ratio(res.Points[1].Call.P50Ms, res.Points[0].Call.P50Ms)
	res.PartitionRatio = ratio(res.Points[3].Call.P50Ms, res.Points[2].Call.P50Ms)
	res.PerInspectionPartitionRatio = ratio(res.Points[3].TracedMsPerInspection, res.Points[2].TracedMsPerInspection)
	return res, nil
}

// scaleRun is one loaded configuration being measured.
type scaleRun struct {
	cfg       scaleConfig
	env       *docketEnv
	pt        scalePoint
	durations []time.Duration
	claims    int
}

// measurePair loads both configurations, times calls on them in
// alternating slices and returns their points.
func measurePair(ctx context.Context, c *cluster, pair [2]scaleConfig, calls int, p *progress) (points []scalePoint, err error) {
	var runs []*scaleRun
	defer func() {
		for _, r := range runs {
			err = errors.Join(err, r.env.close())
		}
	}()
	for _, cfg := range pair {
		r, err := prepareScale(ctx, c, cfg, p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.label, err)
		}
		runs = append(runs, r)
	}
	for done := 0; done < calls; done += scaleSlice {
		for _, r := range runs {
			if err := r.timeCalls(ctx, min(scaleSlice, calls-done)); err != nil {
				return nil, fmt.Errorf("%s: %w", r.cfg.label, err)
			}
		}
	}
	for _, r := range runs {
		pt, err := r.finish(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.cfg.label, err)
		}
		points = append(points, pt)
		p.logf("  %-26s call p50 %.2f ms p99 %.2f ms, %.1f claims/call, %.2f inspections/call, %.3f ms/inspection (load %.1fs)",
			pt.Label, pt.Call.P50Ms, pt.Call.P99Ms, pt.ClaimsPerCall, pt.TracedInspectionsPerCall, pt.TracedMsPerInspection, pt.LoadSeconds)
	}
	return points, nil
}

// prepareScale loads cfg into a fresh TenantFair database and makes the
// warm-up calls.
func prepareScale(ctx context.Context, c *cluster, cfg scaleConfig, p *progress) (*scaleRun, error) {
	env, err := openDocket(ctx, c, engineTenantFair, uncappedCap, 3)
	if err != nil {
		return nil, err
	}
	r := &scaleRun{cfg: cfg, env: env, pt: scalePoint{Label: cfg.label, ReadyRuns: cfg.ready, Active: cfg.active}}
	if cfg.partitions == 0 {
		r.pt.Active = cfg.tenants
	}
	loaded := time.Now()
	err = loadScale(ctx, env, cfg, p)
	if err == nil {
		r.pt.LoadSeconds = time.Since(loaded).Seconds()
		err = env.pool.QueryRow(ctx, `select count(*) from docket_runs`).Scan(&r.pt.Runs)
	}
	if err == nil {
		err = env.pool.QueryRow(ctx, `select count(*) from docket_claim_schedule where unfinished_count > 0`).Scan(&r.pt.Partitions)
	}
	for i := 0; err == nil && i < scaleWarmups; i++ {
		_, err = docketClaim(env.client, scaleDemand)(ctx)
	}
	if err != nil {
		return nil, errors.Join(err, env.close())
	}
	return r, nil
}

// timeCalls makes n timed claim calls.
func (r *scaleRun) timeCalls(ctx context.Context, n int) error {
	claim := docketClaim(r.env.client, scaleDemand)
	for range n {
		start := time.Now()
		got, err := claim(ctx)
		if err != nil {
			return err
		}
		r.durations = append(r.durations, time.Since(start))
		r.claims += got
	}
	return nil
}

// finish summarizes the timed calls and adds the traced sample.
func (r *scaleRun) finish(ctx context.Context) (scalePoint, error) {
	var busy time.Duration
	for _, d := range r.durations {
		busy += d
	}
	pt := r.pt
	pt.ClaimsPerCall = float64(r.claims) / float64(len(r.durations))
	pt.ClaimsPerSecond = ratio(float64(r.claims), busy.Seconds())
	pt.Call = summarize(r.durations)
	var err error
	pt.TracedInspectionsPerCall, pt.TracedMsPerInspection, err = traceSample(ctx, r.env, scaleTracedCalls)
	return pt, err
}

// loadScale loads one configuration and refreshes statistics.
func loadScale(ctx context.Context, env *docketEnv, cfg scaleConfig, p *progress) error {
	now := time.Now()
	if cfg.history > 0 {
		p.logf("    loading %d done runs", cfg.history)
		if err := loadHistory(ctx, env, cfg.history, cfg.tenants); err != nil {
			return fmt.Errorf("load history: %w", err)
		}
	}
	tenantSQL := fmt.Sprintf("'t' || lpad((g %% %d)::text, 3, '0')", cfg.tenants)
	if cfg.partitions > 0 {
		p.logf("    loading %d partitions with one future run each", cfg.partitions)
		if err := loadFuture(ctx, env, cfg.partitions, now); err != nil {
			return fmt.Errorf("load dormant partitions: %w", err)
		}
		stride := cfg.partitions / cfg.active
		tenantSQL = fmt.Sprintf("'p' || lpad(((g %% %d) * %d)::text, 6, '0')", cfg.active, stride)
	}
	if err := loadDueRuns(ctx, env, cfg.ready, tenantSQL, now); err != nil {
		return fmt.Errorf("load due runs: %w", err)
	}
	p.logf("    vacuum analyze")
	return env.exec(ctx, "vacuum analyze")
}

// traceSample makes calls traced claim calls and returns the mean
// inspections per call and the mean call time per inspection.
func traceSample(ctx context.Context, env *docketEnv, calls int) (perCall, msPerInspection float64, err error) {
	inspections := 0
	var busy time.Duration
	for range calls {
		start := time.Now()
		tr, err := env.client.TraceClaimDue(ctx, docketRequest(scaleDemand))
		if err != nil {
			return 0, 0, err
		}
		busy += time.Since(start)
		inspections += len(tr.Inspections)
	}
	return float64(inspections) / float64(calls), ratio(ms(busy), float64(inspections)), nil
}

// table renders the scenario.
func (r *scaleResult) table() *table {
	t := newTable(fmt.Sprintf("4. Scale: TenantFair claim calls of demand %d, one claimer, claims kept, caps not binding", r.Demand),
		"configuration", "runs in table", "ring size", "with due work", "call p50 ms", "call p99 ms", "claims/call", "claims/s", "inspections/call", "ms/inspection", "p50 ratio")
	for i, pt := range r.Points {
		rt := "1.00"
		switch i {
		case 1:
			rt = f2(r.TableRatio)
		case 3:
			rt = f2(r.PartitionRatio)
		}
		t.add(pt.Label, strconv.Itoa(pt.Runs), strconv.Itoa(pt.Partitions), strconv.Itoa(pt.Active), f2(pt.Call.P50Ms), f2(pt.Call.P99Ms),
			f1(pt.ClaimsPerCall), f0(pt.ClaimsPerSecond), f2(pt.TracedInspectionsPerCall), f3(pt.TracedMsPerInspection), rt)
	}
	return t
}
