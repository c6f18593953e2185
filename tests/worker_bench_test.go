package tests

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket-go/docket"
)

// Worker drain shape: no-op runs over benchTenants tenants, handled by one
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
	for _, eng := range benchEngines {
		b.Run(eng.name, func(b *testing.B) {
			benchWorkerDrain(b, eng.open(b, wbCap, wbPoolConns))
		})
	}
}

func benchWorkerDrain(b *testing.B, e *clEnv) {
	runs := max(b.N, wbConcurrency)
	benchBacklogDue(b, e, runs)
	ctx := testContext(b)
	var started, written atomic.Int64
	all := make(chan struct{})
	w, err := docket.NewWorker(e.client, docket.WorkerConfig{
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
	if got := queryInt64(b, e.pool, `select count(*) from docket_runs where status = 'done'`); got != int64(runs) {
		b.Fatalf("%d runs done, want %d", got, runs)
	}
	b.ReportMetric(float64(runs)/b.Elapsed().Seconds(), "runs/s")
}

// benchBacklogDue inserts runs due now spread over benchTenants, and
// vacuums and analyzes them.
func benchBacklogDue(b *testing.B, e *clEnv, runs int) {
	execSQL(b, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('w-%s', g), format('t%s', lpad((g % $2::integer)::text, 3, '0')), 'g', 'h1', 'running',
		       '{}', now() - make_interval(secs => $1::integer - g)
		  from generate_series(1, $1::integer) g`, runs, benchTenants)
	execSQL(b, e.pool, `vacuum analyze docket_runs`)
}
