package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
)

// wtPoints keeps the points of collected whose key starts with one of
// prefixes.
func wtPoints(c tmCollected, name string, prefixes ...string) tmPoints {
	out := tmPoints{}
	for key, v := range c.points[name] {
		for _, p := range prefixes {
			if strings.HasPrefix(key, p) {
				out[key] = v
			}
		}
	}
	return out
}

// TestWorkerCountsEachReadCommitAndReleaseOnce drains runs whose reads and
// commits the worker groups into shared statements, one of them with a
// commit refused by its fence, and requires the store and release counts a
// FetchRun and a Commit per run would have recorded.
func TestWorkerCountsEachReadCommitAndReleaseOnce(t *testing.T) {
	t.Parallel()
	const perTenant = 12
	pool := wkPool(t, pgtest.NewDatabase(t), 16)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := tenantFairConfig(4)
	cfg.MeterProvider = provider
	client := openClient(t, pool, cfg)
	tenants := []string{"wt-a", "wt-b", "wt-c"}
	ids := wkInsertRuns(t, client, perTenant, tenants...)
	rs := &rsStore{t: t, pool: pool, client: client}
	rs.insert("wt-a", "stolen")

	log := &wkLogRecorder{}
	events := newWkEvents()
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{
		Concurrency: 8, Logger: slog.New(log), OnEvent: events.hook,
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
	fenced := wkFenced("stolen", "complete")
	events.waitFor(t, "every run done and the stolen verdict refused", func(evs []docket.WorkerEvent) bool {
		return wkAllWritten(evs, "complete", ids) && fenced(evs)
	})
	wkStop(t, w, runResult)

	got := tmCollect(t, testContext(t), reader)
	n := int64(len(ids))
	want := tmPoints{
		tmAttrs("operation", "fetch_run", "result", "ok"): n + 1,
		tmAttrs("operation", "commit", "result", "ok"):    n,
		tmAttrs("operation", "commit", "result", "stale"): 1,
	}
	if points := wtPoints(got, "docket.store.duration", "operation=fetch_run,", "operation=commit,"); !maps.Equal(points, want) {
		t.Errorf("store calls:\n got  %v\n want %v", sortedPoints(points), sortedPoints(want))
	}
	got.expectPoints(t, "docket.admission.releases", tmPoints{tmAttrs("reason", "terminal"): n})
	got.expectPoints(t, "docket.worker.fenced_commits", tmPoints{tmAttrs("reason", "newer_holder"): 1})
	if got := queryInt64(t, pool, `select count(*) from docket_runs where status = 'done' and checkpoint_seq = 1 and state = '{"done": true}'`); got != n {
		t.Errorf("%d runs done by exactly one commit, want %d", got, n)
	}
	if r := rs.row("stolen"); r.Status != "running" || r.Seq != 0 || r.Token == nil || r.AdmittedAt == nil {
		t.Errorf("stolen run %+v, want it untouched by the refused verdict", r)
	}
	wkExpectQuiet(t, log)
}
