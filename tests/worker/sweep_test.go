package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// swept is the debug record the Worker writes when a ring sweep ends.
const swept = "docket worker swept the ring"

// hour is a poll interval no test outlasts: whatever a test waits for
// comes from the claim calls of a sweep, never from a poll.
const hour = time.Hour

// insertDormant inserts one run due tomorrow for each of n tenants
// ws-d000, ws-d001, ... in one batch, so they take the first n ring
// positions in that order.
func insertDormant(t *testing.T, client *docket.Client, n int) {
	t.Helper()
	tomorrow := time.Now().Add(24 * time.Hour)
	runs := make([]docket.NewRun, n)
	for i := range runs {
		runs[i] = docket.NewRun{
			RunID: fmt.Sprintf("ws-d%03d-run", i), Scope: docket.Tenant(fmt.Sprintf("ws-d%03d", i)),
			GraphID: "graph", GraphHash: "v1", State: json.RawMessage(`{}`), WakeAt: tomorrow,
		}
	}
	if _, err := client.InsertRuns(testkit.Context(t), runs); err != nil {
		t.Fatalf("insert dormant runs: %v", err)
	}
}

// client opens a TenantFair client (cap 2) whose metrics a manual reader
// collects.
func client(t *testing.T) (*docket.Client, *sdkmetric.ManualReader) {
	t.Helper()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 16)
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	cfg := testkit.TenantFairConfig(2)
	cfg.MeterProvider = provider
	return testkit.OpenClient(t, pool, cfg), reader
}

// TestWorkerSweepDrainsBehindDormantTenants puts two tenants with a backlog
// behind 300 tenants whose only run is due tomorrow, so the first call's 32
// inspections see none of the backlog. With an hour's poll interval the
// Worker drains the backlog only because an unfilled call continues the
// sweep at once; some sweep calls must have claimed.
func TestWorkerSweepDrainsBehindDormantTenants(t *testing.T) {
	t.Parallel()
	const perTenant = 20
	client, reader := client(t)
	insertDormant(t, client, 300)
	ids := testkit.WorkerInsertRuns(t, client, perTenant, "ws-a", "ws-b")

	handled := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 4, PollInterval: hour, OnEvent: events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			handled.Add(job.RunID)
			return docket.Complete(nil)
		},
	})
	events.WaitDone(t, len(ids))
	testkit.StopWorker(t, w, runResult)
	handled.ExpectEach(t, ids, 1)

	got := testkit.TelemetryCollect(t, testkit.Context(t), reader)
	if claimed := got.Points["docket.worker.sweep_calls"][testkit.TelemetryAttrs("result", "claimed")]; claimed < 1 {
		t.Errorf("sweep calls that claimed = %d, want at least 1 (points %v)", claimed, testkit.SortedPoints(got.Points["docket.worker.sweep_calls"]))
	}
	if n := testkit.QueryInt64(t, client.Pool(), `select count(*) from docket_runs where status = 'running'`); n != 300 {
		t.Errorf("running runs = %d, want the 300 dormant ones", n)
	}
}

// TestWorkerSweepIsOneRevolutionOnAnIdleDomain starts a Worker with an
// hour's poll interval on rings of dormant tenants only. It claims twice
// without a poll: at start, and once more for the wake its listener sends
// right after LISTEN. Each wake is one sweep of ceil(positions / 32) empty
// calls, of which every call after the first is a sweep call. A ring of at
// most S = 32 positions makes one call per wake, as a Worker without sweeps
// does, and no sweep call.
func TestWorkerSweepIsOneRevolutionOnAnIdleDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		positions, calls int
	}{
		{positions: 1, calls: 1},
		{positions: policy.InspectionsPerCall, calls: 1},
		{positions: policy.InspectionsPerCall + 1, calls: 2},
		{positions: 300, calls: 10},
	} {
		t.Run(strconv.Itoa(tc.positions), func(t *testing.T) {
			t.Parallel()
			client, reader := client(t)
			insertDormant(t, client, tc.positions)
			log := &testkit.WorkerLogRecorder{}
			events := testkit.NewWorkerEvents()
			w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
				Concurrency: 2, PollInterval: hour, Logger: slog.New(log), OnEvent: events.Hook,
				Handler: func(context.Context, *docket.Job) docket.Result {
					t.Error("a dormant run was handled")
					return docket.Complete(nil)
				},
			})
			const wakes = 2
			// Both sweeps are over once their calls returned; Stop then
			// waits for the claim loop, so the sweep ends are logged.
			events.WaitFor(t, "the calls of both sweeps", func(evs []docket.WorkerEvent) bool {
				return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventClaimed }) >= wakes*tc.calls
			})
			testkit.StopWorker(t, w, runResult)

			swept := log.Find(swept)
			if len(swept) != wakes {
				t.Fatalf("%d sweep ends logged, want %d", len(swept), wakes)
			}
			wantAttrs := map[string]string{"calls": strconv.Itoa(tc.calls), "ring_positions": strconv.Itoa(tc.positions)}
			for _, rec := range swept {
				for k, v := range wantAttrs {
					if rec.Attrs[k] != v {
						t.Errorf("sweep end %s = %q, want %q", k, rec.Attrs[k], v)
					}
				}
			}
			got := testkit.TelemetryCollect(t, testkit.Context(t), reader)
			got.ExpectPoints(t, "docket.claim.calls", testkit.TelemetryPoints{
				testkit.TelemetryAttrs("policy", "tenant_fair", "result", "empty", "reason", "none", "preference", "none", "fallback", "false"): int64(wakes * tc.calls),
			})
			wantSweeps := testkit.TelemetryPoints{}
			if tc.calls > 1 {
				wantSweeps[testkit.TelemetryAttrs("result", "empty")] = int64(wakes * (tc.calls - 1))
				if shape := got.Shape["docket.worker.sweep_calls"]; shape != "counter {call}" {
					t.Errorf("docket.worker.sweep_calls is a %q, want a counter {call}", shape)
				}
			}
			got.ExpectPoints(t, "docket.worker.sweep_calls", wantSweeps)
		})
	}
}
