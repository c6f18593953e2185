package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// Rate scenario shape: busy tenants with 1 ms runs keep one Worker of
// drainConcurrency full while one more tenant, limited to rateLimit
// admissions per second with a burst of rateBurst (so one visit can take a
// whole grant of Q = 8), has more queued runs than its rate can take.
const (
	rateBusyTenants = 100
	rateLimited     = "limited"
	rateLimit       = 50
	rateBurst       = 7
	rateCap         = 8
	rateHandler     = time.Millisecond
)

// ratePoint is one time-boxed run of the Worker.
type ratePoint struct {
	Label string `json:"label"`
	// Busy and Limited report whether the busy tenants, resp. the limited
	// tenant with its rate, were there.
	Busy    bool `json:"busy"`
	Limited bool `json:"limited"`
	// BusyRunsPerSecond is the busy tenants' finished runs per second.
	BusyRunsPerSecond float64 `json:"busy_runs_per_second"`
	// BusyExhausted reports busy tenants that ran out of runs early.
	BusyExhausted bool `json:"busy_exhausted"`
	// LimitedAdmissions counts the limited tenant's admissions in the
	// window, and LimitedPerSecond is their rate.
	LimitedAdmissions int     `json:"limited_admissions"`
	LimitedPerSecond  float64 `json:"limited_per_second"`
	// MaxInOneSecond is the most admissions of the limited tenant in any
	// interval of one second (its bound is limit + burst = rateLimit).
	MaxInOneSecond int     `json:"max_admissions_in_one_second"`
	WindowSeconds  float64 `json:"window_seconds"`
}

// rateResult is the rate scenario.
type rateResult struct {
	BusyTenants int         `json:"busy_tenants"`
	BusyRuns    int         `json:"busy_runs"`
	LimitedRuns int         `json:"limited_runs"`
	Limit       int         `json:"limit_per_second"`
	Burst       int         `json:"burst"`
	Cap         int         `json:"tenant_fair_cap"`
	Concurrency int         `json:"concurrency"`
	Points      []ratePoint `json:"points"`
	// BusyRatio is the busy tenants' throughput beside the limited tenant
	// over their throughput alone (best rounds).
	BusyRatio float64 `json:"busy_ratio"`
	// Accuracy is the limited tenant's admissions per second alone over
	// its limit (best round).
	Accuracy float64 `json:"accuracy"`
}

// runRate measures a tenant limited to rateLimit admissions per second
// among busy tenants: its admission rate and the most admissions in any
// second, from the admission times the database recorded, and the busy
// tenants' throughput beside it against their throughput alone. Each point
// runs a fresh TenantFair domain for RateWindow.
func runRate(ctx context.Context, c *cluster, o options, p *progress) (*rateResult, error) {
	sz := o.sizes
	res := &rateResult{BusyTenants: rateBusyTenants, BusyRuns: sz.RateBusyRuns, LimitedRuns: sz.RateLimitedRuns,
		Limit: rateLimit, Burst: rateBurst, Cap: rateCap, Concurrency: drainConcurrency}
	p.logf("rate: %d busy tenants (%d runs of %s) and one tenant limited to %d/s (%d runs), %s per point",
		rateBusyTenants, sz.RateBusyRuns, rateHandler, rateLimit, sz.RateLimitedRuns, sz.RateWindow)
	points := []struct {
		busy, limited bool
		label         string
	}{
		{true, false, "busy alone"},
		{false, true, "limited alone"},
		{true, true, "limited beside busy"},
	}
	var busyAlone, busyBeside float64
	for round := range o.rounds {
		for _, shape := range points {
			pt, err := rateOnce(ctx, c, p, sz, shape.busy, shape.limited)
			if err != nil {
				return nil, fmt.Errorf("round %d: %w", round+1, err)
			}
			pt.Label = fmt.Sprintf("%s, round %d", shape.label, round+1)
			res.Points = append(res.Points, pt)
			p.logf("  %-30s busy %.0f runs/s, limited %d admissions (%.2f/s), at most %d in one second",
				pt.Label, pt.BusyRunsPerSecond, pt.LimitedAdmissions, pt.LimitedPerSecond, pt.MaxInOneSecond)
			switch {
			case shape.busy && shape.limited:
				busyBeside = max(busyBeside, pt.BusyRunsPerSecond)
			case shape.busy:
				busyAlone = max(busyAlone, pt.BusyRunsPerSecond)
			default:
				res.Accuracy = max(res.Accuracy, pt.LimitedPerSecond/rateLimit)
			}
		}
	}
	res.BusyRatio = ratio(busyBeside, busyAlone)
	return res, nil
}

// rateOnce runs one point: with busy the busy tenants' runs, with limited
// the limited tenant's runs under its rate, worked for sz.RateWindow.
func rateOnce(ctx context.Context, c *cluster, p *progress, sz sizes, busyOn, limited bool) (ratePoint, error) {
	pt := ratePoint{Busy: busyOn, Limited: limited}
	b := newBook(sz.RateBusyRuns + sz.RateLimitedRuns)
	var busy, limitedRuns []int
	if busyOn {
		busy = b.addManySpread(sz.RateBusyRuns, rateBusyTenants, rateHandler)
	}
	if limited {
		limitedRuns = b.addMany(rateLimited, sz.RateLimitedRuns, rateHandler)
	}
	b.seal()
	env, err := openDocket(ctx, c, engineTenantFair, rateCap, drainPoolConns)
	if err != nil {
		return pt, err
	}
	rec := &admissionRecorder{env: env}
	d := &docketDrain{env: env, book: b, ran: make(chan error, 1)}
	d.worker, err = docket.NewWorker(env.client, docket.WorkerConfig{Concurrency: drainConcurrency, Handler: rec.wrap(d.handle)})
	if err != nil {
		return pt, errors.Join(err, d.close())
	}
	if limited {
		if _, err := env.client.PutTenantRate(ctx, docket.Tenant(rateLimited), docket.RateLimit{Limit: rateLimit, Period: time.Second, Burst: rateBurst},
			docket.ClaimPolicyWriteOptions{}); err != nil {
			return pt, errors.Join(err, d.close())
		}
	}
	p.logf("  inserting %d runs", b.size())
	for _, batch := range [][]int{limitedRuns, busy} {
		if err := d.insert(ctx, batch); err != nil {
			return pt, errors.Join(err, d.close())
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	began := time.Now()
	if err := d.start(runCtx); err != nil {
		return pt, errors.Join(err, d.close())
	}
	sleepFor(ctx, sz.RateWindow)
	stopCtx, stopCancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer stopCancel()
	stopErr := d.stop(stopCtx)
	window := time.Since(began)
	var busyDone int64
	if err := env.pool.QueryRow(ctx, `select count(*) from docket_runs where status = 'done' and tenant_id <> $1`, rateLimited).
		Scan(&busyDone); err != nil {
		return pt, errors.Join(err, stopErr, d.close())
	}
	pt.WindowSeconds = window.Seconds()
	pt.BusyRunsPerSecond = float64(busyDone) / window.Seconds()
	pt.BusyExhausted = busyOn && busyDone >= int64(len(busy))
	times, recErr := rec.sorted()
	if recErr != nil {
		return pt, errors.Join(recErr, stopErr, d.close())
	}
	pt.LimitedAdmissions = len(times)
	pt.LimitedPerSecond = float64(len(times)) / window.Seconds()
	pt.MaxInOneSecond = maxInWindow(times, time.Second)
	return pt, errors.Join(stopErr, d.close())
}

// admissionRecorder reads the admission time of each run of the limited
// tenant from the database as its handler starts (the run is claimed, so
// its marker holds the time its promotion recorded).
type admissionRecorder struct {
	env   *docketEnv
	mu    sync.Mutex
	times []time.Time
	err   error
}

// wrap records the limited tenant's admissions before calling h.
func (a *admissionRecorder) wrap(h docket.Handler) docket.Handler {
	return func(ctx context.Context, job *docket.Job) docket.Result {
		if job.Scope == docket.Tenant(rateLimited) {
			var at time.Time
			err := a.env.pool.QueryRow(ctx, `select tenant_admitted_at from docket_runs where run_id = $1`, job.RunID).Scan(&at)
			a.mu.Lock()
			if err != nil {
				a.err = errors.Join(a.err, err)
			} else {
				a.times = append(a.times, at)
			}
			a.mu.Unlock()
		}
		return h(ctx, job)
	}
}

// sorted returns the recorded admission times in order, or the first
// failed read.
func (a *admissionRecorder) sorted() ([]time.Time, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := slices.Clone(a.times)
	slices.SortFunc(out, func(x, y time.Time) int { return x.Compare(y) })
	return out, a.err
}

// maxInWindow is the most of the sorted times in any half-open interval of
// length w.
func maxInWindow(times []time.Time, w time.Duration) int {
	most := 0
	for i, start := 0, 0; i < len(times); i++ {
		for !times[i].Before(times[start].Add(w)) {
			start++
		}
		most = max(most, i-start+1)
	}
	return most
}

func (r *rateResult) table() *table {
	t := newTable(fmt.Sprintf("10. Rate: one tenant limited to %d admissions/s, burst %d (%d runs), alone and beside %d busy tenants (%d runs of %s); one Worker of concurrency %d, TenantFair cap %d; limited alone / its limit: %sx; busy throughput beside it / alone: %sx",
		r.Limit, r.Burst, r.LimitedRuns, r.BusyTenants, r.BusyRuns, rateHandler, r.Concurrency, r.Cap, f2(r.Accuracy), f2(r.BusyRatio)),
		"point", "busy runs/s", "limited admissions", "limited per s", "most in 1 s", "window s")
	for _, pt := range r.Points {
		lim, per, most := "-", "-", "-"
		if pt.Limited {
			lim, per, most = fmt.Sprint(pt.LimitedAdmissions), f2(pt.LimitedPerSecond), fmt.Sprint(pt.MaxInOneSecond)
		}
		busy := "-"
		if pt.Busy {
			busy = f0(pt.BusyRunsPerSecond)
		}
		if pt.BusyExhausted {
			busy += " (ran out)"
		}
		t.add(pt.Label, busy, lim, per, most, f2(pt.WindowSeconds))
	}
	return t
}
