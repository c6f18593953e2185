package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestWorkerCountsEachReadCommitAndReleaseOnce drains runs whose reads and
// commits the worker groups into shared statements, one of them with a
// commit refused by its fence, and requires the store and release counts a
// FetchRun and a Commit per run would have recorded.
func TestWorkerCountsEachReadCommitAndReleaseOnce(t *testing.T) {
	t.Parallel()
	const perTenant = 12
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 16)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := testkit.TenantFairConfig(4)
	cfg.MeterProvider = provider
	client := testkit.OpenClient(t, pool, cfg)
	tenants := []string{"wt-a", "wt-b", "wt-c"}
	ids := testkit.WorkerInsertRuns(t, client, perTenant, tenants...)
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("wt-a", "stolen")

	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 8, Logger: slog.New(log), OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if job.RunID == "stolen" {
				// Another holder takes the claim before the verdict.
				if _, err := pool.Exec(ctx, `update docket_runs set claim_token = gen_random_uuid() where run_id = 'stolen'`); err != nil {
					return docket.Fail(fmt.Errorf("steal: %w", err))
				}
			}
			return docket.Complete(json.RawMessage(`{"done":true}`))
		},
	})
	fenced := testkit.WorkerFenced("stolen", "complete")
	events.WaitFor(t, "every run done and the stolen verdict refused", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerAllWritten(evs, "complete", ids) && fenced(evs)
	})
	testkit.StopWorker(t, w, runResult)

	got := testkit.TelemetryCollect(t, testkit.Context(t), reader)
	n := int64(len(ids))
	want := testkit.TelemetryPoints{
		testkit.TelemetryAttrs("operation", "fetch_run", "result", "ok"): n + 1,
		testkit.TelemetryAttrs("operation", "commit", "result", "ok"):    n,
		testkit.TelemetryAttrs("operation", "commit", "result", "stale"): 1,
	}
	if points := testkit.WorkerTelemetryPoints(got, "docket.store.duration", "operation=fetch_run,", "operation=commit,"); !maps.Equal(points, want) {
		t.Errorf("store calls:\n got  %v\n want %v", testkit.SortedPoints(points), testkit.SortedPoints(want))
	}
	got.ExpectPoints(t, "docket.admission.releases", testkit.TelemetryPoints{testkit.TelemetryAttrs("reason", "terminal"): n})
	got.ExpectPoints(t, "docket.worker.fenced_commits", testkit.TelemetryPoints{testkit.TelemetryAttrs("reason", "newer_holder"): 1})
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where status = 'done' and checkpoint_seq = 1 and state = '{"done": true}'`); got != n {
		t.Errorf("%d runs done by exactly one commit, want %d", got, n)
	}
	if r := rs.Row("stolen"); r.Status != "running" || r.Seq != 0 || r.Token == nil || r.AdmittedAt == nil {
		t.Errorf("stolen run %+v, want it untouched by the refused verdict", r)
	}
	testkit.WorkerExpectQuiet(t, log)
}
