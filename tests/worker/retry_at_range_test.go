package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestWorkerRetryAtOutOfRange runs a handler that asks to retry in
// the year 300000 next to one that completes, both leased by one claim: the
// far verdict is refused as invalid before any statement and fails its run
// once (checkpoint type invalid_result), the handler is not called again,
// and the other verdict commits as usual.
func TestWorkerRetryAtOutOfRange(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	var runs []docket.NewRun
	for _, id := range []string{"far", "near"} {
		runs = append(runs, docket.NewRun{RunID: id, Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{"n":0}`)})
	}
	if _, err := client.InsertRuns(testkit.Context(t), runs); err != nil {
		t.Fatalf("insert: %v", err)
	}
	counter := testkit.NewWorkerCounter()
	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	far := time.Date(300000, time.January, 1, 0, 0, 0, 0, time.UTC)
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, Logger: slog.New(log), OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			if job.RunID == "far" {
				return docket.RetryAt(far)
			}
			return docket.Complete(json.RawMessage(`{"n":1}`))
		},
	})
	events.WaitVerdicts(t, map[string]string{"far": "invalid_result", "near": "complete"})
	testkit.StopWorker(t, w, runResult)

	wants := map[string]struct {
		status, checkpoint, state string
		seq                       int64
	}{
		"far":  {"failed", "invalid_result", `{"n": 0}`, 1},
		"near": {"done", "complete", `{"n": 1}`, 1},
	}
	for id, want := range wants {
		run, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), id)
		if err != nil {
			t.Fatalf("fetch %s: %v", id, err)
		}
		if string(run.Status) != want.status || run.LatestCheckpointType != want.checkpoint || string(run.State) != want.state ||
			run.CheckpointSeq != want.seq || run.Claimed() || run.WakeAt != nil {
			t.Errorf("%s: %+v, want %+v unclaimed without a wake time", id, run, want)
		}
	}
	counter.ExpectEach(t, []string{"far", "near"}, 1)
	const refused = "docket worker result refused as invalid; failing the run"
	if got := log.Find(refused); len(got) != 1 || got[0].Level != slog.LevelWarn {
		t.Errorf("refusal records %+v, want one at warn level", got)
	}
	invalid := log.Find("docket worker invalid result")
	if len(invalid) != 1 || invalid[0].Attrs["run_id"] != "far" || !strings.Contains(invalid[0].Attrs["error"], "ReleaseAt time") {
		t.Errorf("invalid result debug records %+v, want one for run far naming the ReleaseAt time", invalid)
	}
	testkit.WorkerExpectQuiet(t, log, refused)
}
