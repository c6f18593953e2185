package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// hotTenant is the tenant whose backlog is inserted first.
const hotTenant = "hot"

// Intervals of the drain watch: completion and the policy sampler are
// checked often, progress is printed every second.
const (
	checkInterval    = 25 * time.Millisecond
	progressInterval = time.Second
	stopTimeout      = 30 * time.Second
)

// drainResult is what one engine's drain measured.
type drainResult struct {
	engine engine
	// schema is where the engine's backlog lives (kept only with Keep).
	schema string
	// hotInserted and lightInserted are when each cohort's insert returned.
	hotInserted, lightInserted time.Time
	// began is when the worker started, finished when the database first
	// showed every run done.
	began, finished time.Time
	// hotStarts and lightStarts are each run's first handler start.
	hotStarts, lightStarts []time.Time
	// invocations counts every handler call.
	invocations int
	policy      policyView
}

// policyView is what InspectClaimPolicy said about the hot tenant.
type policyView struct {
	// mid is the first snapshot at or past half the drain that shows the
	// hot tenant at its cap (else the fullest one past half); midDone is the
	// done count when it was taken.
	mid     *docket.ClaimPolicyInspection
	midDone int64
	// maxAdmitted is the highest admitted count over samples snapshots.
	maxAdmitted int64
	samples     int
	// after is the snapshot after the drain, or afterErr.
	after    docket.ClaimPolicyInspection
	afterErr error
}

// drainEngine builds a fresh schema for e, inserts the backlog, drains it
// with one Worker while printing progress, and drops the schema again
// (unless o.Keep, when a successful drain keeps it for the console).
func drainEngine(ctx context.Context, databaseURL string, e engine, o Options) (res drainResult, err error) {
	fmt.Fprintf(o.Out, "\n== %s ==\n", e.label)
	schema, drop, err := createSchema(ctx, databaseURL, e.name)
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil || !o.Keep {
			err = errors.Join(err, drop())
		}
	}()
	migrator, err := docket.NewMigratorURL(databaseURL, docket.MigratorConfig{Schema: schema})
	if err != nil {
		return res, err
	}
	if err := migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		return res, err
	}
	pool, err := openPool(ctx, databaseURL, schema, o.Concurrency)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	client, err := docket.Open(ctx, pool, e.config)
	if err != nil {
		return res, err
	}
	res = drainResult{engine: e, schema: schema}
	if res.hotInserted, res.lightInserted, err = insertBacklog(ctx, client, o); err != nil {
		return res, err
	}
	fmt.Fprintf(o.Out, "  inserted %d runs in schema %s\n", o.total(), schema)

	starts := &startRecorder{first: make(map[string]time.Time, o.total())}
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: o.Concurrency,
		Handler:     starts.handler(o.HandlerTime),
	})
	if err != nil {
		return res, err
	}
	res.began = time.Now()
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(ctx) }()
	res.finished, res.policy, err = watch(ctx, o, e, client, pool)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	err = errors.Join(err, worker.Stop(stopCtx), <-ran)
	if err != nil {
		return res, err
	}
	elapsed := res.finished.Sub(res.began)
	fmt.Fprintf(o.Out, "  drained %d runs in %s (%.0f runs/s)\n", o.total(), elapsed.Round(time.Millisecond),
		float64(o.total())/elapsed.Seconds())
	res.policy.after, res.policy.afterErr = client.InspectClaimPolicy(ctx, docket.Tenant(hotTenant))
	res.hotStarts, res.lightStarts, res.invocations = starts.cohorts()
	return res, nil
}

// openPool opens a pool whose connections resolve names in schema, with room
// for the worker's claims, heartbeats, commits and LISTEN session.
func openPool(ctx context.Context, databaseURL, schema string, concurrency int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = int32(2*concurrency + 4)
	return pgxpool.NewWithConfig(ctx, cfg)
}

// insertBacklog inserts the hot tenant's runs, then the light tenants', one
// batch each, and returns when each batch was in.
func insertBacklog(ctx context.Context, client *docket.Client, o Options) (hot, light time.Time, err error) {
	state := json.RawMessage(`{}`)
	runs := make([]docket.NewRun, 0, o.HotRuns)
	for i := range o.HotRuns {
		runs = append(runs, docket.NewRun{RunID: fmt.Sprintf("%s-%05d", hotTenant, i), Scope: docket.Tenant(hotTenant),
			GraphID: "demo", GraphHash: "v1", State: state})
	}
	if _, err := client.InsertRuns(ctx, runs); err != nil {
		return hot, light, fmt.Errorf("insert hot backlog: %w", err)
	}
	hot = time.Now()
	runs = runs[:0]
	for t := range o.LightTenants {
		tenant := fmt.Sprintf("light-%02d", t)
		for i := range o.LightRuns {
			runs = append(runs, docket.NewRun{RunID: fmt.Sprintf("%s-%03d", tenant, i), Scope: docket.Tenant(tenant),
				GraphID: "demo", GraphHash: "v1", State: state})
		}
	}
	if _, err := client.InsertRuns(ctx, runs); err != nil {
		return hot, light, fmt.Errorf("insert light backlog: %w", err)
	}
	return hot, time.Now(), nil
}

// watch waits until every run is done, printing progress every second and,
// under TenantFair, sampling the hot tenant's claim policy.
func watch(ctx context.Context, o Options, e engine, client *docket.Client, pool *pgxpool.Pool) (time.Time, policyView, error) {
	var view policyView
	total := int64(o.total())
	began := time.Now()
	check := time.NewTicker(checkInterval)
	defer check.Stop()
	progress := time.NewTicker(progressInterval)
	defer progress.Stop()
	var done, lastDone int64
	lastTick := began
	for {
		select {
		case <-ctx.Done():
			return time.Time{}, view, ctx.Err()
		case now := <-progress.C:
			rate := float64(done-lastDone) / now.Sub(lastTick).Seconds()
			fmt.Fprintf(o.Out, "  %-12s %5.1fs  done %6d/%d  %6.0f runs/s\n", e.name, now.Sub(began).Seconds(), done, total, rate)
			lastDone, lastTick = done, now
		case <-check.C:
			if err := pool.QueryRow(ctx, `select count(*) from docket_runs where status = 'done'`).Scan(&done); err != nil {
				return time.Time{}, view, fmt.Errorf("count done runs: %w", err)
			}
			if done == total {
				return time.Now(), view, nil
			}
			if e.name == "tenant_fair" {
				if err := view.sample(ctx, client, done, total); err != nil {
					return time.Time{}, view, err
				}
			}
		}
	}
}

// sample takes one snapshot of the hot tenant's claim policy.
func (v *policyView) sample(ctx context.Context, client *docket.Client, done, total int64) error {
	ins, err := client.InspectClaimPolicy(ctx, docket.Tenant(hotTenant))
	if err != nil {
		return fmt.Errorf("inspect claim policy: %w", err)
	}
	v.samples++
	v.maxAdmitted = max(v.maxAdmitted, ins.Admitted)
	atCap := v.mid != nil && v.mid.Admitted >= int64(v.mid.EffectiveMaxActiveRuns)
	if 2*done >= total && !atCap && (v.mid == nil || ins.Admitted > v.mid.Admitted) {
		v.mid, v.midDone = &ins, done
	}
	return nil
}

// startRecorder keeps each run's first handler start, in memory only.
type startRecorder struct {
	mu          sync.Mutex
	first       map[string]time.Time
	invocations int
}

// handler records the start, works for d and completes the run. A handler
// cancelled by a stopping worker yields its run instead.
func (r *startRecorder) handler(d time.Duration) docket.Handler {
	return func(ctx context.Context, job *docket.Job) docket.Result {
		now := time.Now()
		r.mu.Lock()
		if _, seen := r.first[job.RunID]; !seen {
			r.first[job.RunID] = now
		}
		r.invocations++
		r.mu.Unlock()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return docket.Complete(nil)
		case <-ctx.Done():
			return docket.Yield()
		}
	}
}

// cohorts splits the first starts into the hot and the light cohort.
func (r *startRecorder) cohorts() (hot, light []time.Time, invocations int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for runID, start := range r.first {
		if strings.HasPrefix(runID, hotTenant+"-") {
			hot = append(hot, start)
		} else {
			light = append(light, start)
		}
	}
	return hot, light, r.invocations
}
