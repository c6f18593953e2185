package worker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Worker drain shape: no-op runs over testkit.BenchTenants tenants, handled by one
// Worker of wbConcurrency, whose pool has room for its claims, reads,
// commits and LISTEN session. TenantFair's cap does not bind in aggregate.
const (
	wbConcurrency = 8
	wbPoolConns   = 2*wbConcurrency + 4
	wbCap         = 4
)

// BenchmarkWorkerDrain reports how fast one Worker drains a due backlog of
// b.N no-op runs end to end, for both engines: from Run until the worker
// reports every run's verdict written. Compare engines only within one run,
// as ratios.
func BenchmarkWorkerDrain(b *testing.B) {
	for _, eng := range testkit.BenchEngines {
		b.Run(eng.Name, func(b *testing.B) {
			benchWorkerDrain(b, eng.Open(b, wbCap, wbPoolConns), benchBacklogDue)
		})
	}
}

// Dormant drain shape: wbActive tenants share the backlog among wbDormant
// tenants whose only run is due tomorrow, interleaved on the ring.
const (
	wbActive  = 20
	wbDormant = 20000
)

// BenchmarkWorkerDrainAmongDormant is BenchmarkWorkerDrain with the backlog
// held by 20 tenants among 20,000 dormant ones, with parked partitions on.
// The full-ring walk has no sub-benchmark here: it drains a few runs
// per minute in this shape, far past the test deadline (see
// docs/fairness-parked.md for the figures).
func BenchmarkWorkerDrainAmongDormant(b *testing.B) {
	pool := testkit.ClaimPoolWithSize(b, wbPoolConns)
	benchWorkerDrain(b, &testkit.ClaimEnv{T: b, Pool: pool, Client: testkit.OpenClient(b, pool, testkit.ParkedConfig(wbCap))}, benchBacklogAmongDormant)
}

// benchBacklogAmongDormant gives each of wbActive+wbDormant interleaved
// tenants one run, a waiting one for the active tenants and one due tomorrow
// for the others, and lets claim calls park whatever is dormant (only in
// parked mode: the steady state of a domain whose dormant tenants were
// parked long ago). Then it inserts runs due now over the active tenants,
// which wakes them, and vacuums and analyzes.
func benchBacklogAmongDormant(b *testing.B, e *testkit.ClaimEnv, runs int) {
	const every = (wbActive + wbDormant) / wbActive
	testkit.ExecSQL(b, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('d-%s', i), format('t%s', lpad(i::text, 5, '0')), 'g', 'h1',
		       case when i % $1 = 0 then 'waiting' else 'running' end, '{}',
		       case when i % $1 <> 0 then now() + interval '1 day' end
		  from generate_series(0, $2::integer - 1) as i`, every, wbActive+wbDormant)
	ctx := testkit.Context(b)
	for calls := 0; testkit.QueryInt64(b, e.Pool, `select count(*) from docket_claim_schedule
			 where unfinished_count > 0 and parked_until is null
			   and exists (select 1 from docket_claim_policy where park_dormant)`) > 0; calls++ {
		if calls > wbActive+wbDormant {
			b.Fatal("the dormant partitions were never all parked")
		}
		if _, err := e.Client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now(), Limit: wbConcurrency, ClaimTTL: time.Hour,
			MaxClaimAttempts: 10}); err != nil {
			b.Fatalf("parking call: %v", err)
		}
	}
	testkit.ExecSQL(b, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('w-%s', g), format('t%s', lpad(((g % $2::integer) * $3::integer)::text, 5, '0')), 'g', 'h1',
		       'running', '{}', now() - make_interval(secs => $1::integer - g)
		  from generate_series(1, $1::integer) g`, runs, wbActive, every)
	testkit.ExecSQL(b, e.Pool, `vacuum analyze docket_runs`)
}

func benchWorkerDrain(b *testing.B, e *testkit.ClaimEnv, load func(b *testing.B, e *testkit.ClaimEnv, runs int)) {
	runs := max(b.N, wbConcurrency)
	load(b, e, runs)
	ctx := testkit.Context(b)
	var started, written atomic.Int64
	all := make(chan struct{})
	w, err := docket.NewWorker(e.Client, docket.WorkerConfig{
		Concurrency: wbConcurrency,
		Handler: func(context.Context, *docket.Job) docket.Result {
			started.Add(1)
			return docket.Complete(nil)
		},
		OnEvent: func(ev docket.WorkerEvent) {
			if ev.Kind == docket.EventVerdict && ev.Outcome == docket.VerdictWritten && written.Add(1) == int64(runs) {
				close(all)
			}
		},
	})
	if err != nil {
		b.Fatalf("new worker: %v", err)
	}
	ran := make(chan error, 1)
	b.ResetTimer()
	go func() { ran <- w.Run(ctx) }()
	select {
	case <-all:
	case <-ctx.Done():
		b.Fatalf("%d of %d verdicts written: %v", written.Load(), runs, ctx.Err())
	}
	b.StopTimer()
	if err := w.Stop(ctx); err != nil {
		b.Fatalf("stop: %v", err)
	}
	if err := <-ran; err != nil {
		b.Fatalf("run: %v", err)
	}
	if got := started.Load(); got != int64(runs) {
		b.Fatalf("%d handler invocations, want %d", got, runs)
	}
	if got := testkit.QueryInt64(b, e.Pool, `select count(*) from docket_runs where status = 'done'`); got != int64(runs) {
		b.Fatalf("%d runs done, want %d", got, runs)
	}
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
}

// benchBacklogDue inserts runs due now spread over testkit.BenchTenants, and
// vacuums and analyzes them.
func benchBacklogDue(b *testing.B, e *testkit.ClaimEnv, runs int) {
	testkit.ExecSQL(b, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('w-%s', g), format('t%s', lpad((g % $2::integer)::text, 3, '0')), 'g', 'h1', 'running',
		       '{}', now() - make_interval(secs => $1::integer - g)
		  from generate_series(1, $1::integer) g`, runs, testkit.BenchTenants)
	testkit.ExecSQL(b, e.Pool, `vacuum analyze docket_runs`)
}
