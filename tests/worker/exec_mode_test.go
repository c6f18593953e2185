package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The worker's shared read and set-based commit pass arrays, so every pgx
// execution mode, including those a transaction pooler may require, must
// carry them: a drain with every kind of verdict the set-based commit takes
// ends with each run written exactly as its verdict says, whether the
// verdicts are written at once or wait for a batch (VerdictBatchWait).
func TestWorkerDrainsInEveryQueryExecMode(t *testing.T) {
	t.Parallel()
	for _, mode := range testkit.QueryExecModes {
		for _, verdictWait := range []time.Duration{0, 50 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s/verdict_wait_%s", mode, verdictWait), func(t *testing.T) {
				t.Parallel()
				drainEveryVerdict(t, mode, verdictWait)
			})
		}
	}
}

// drainEveryVerdict is TestWorkerDrainsInEveryQueryExecMode in one mode
// with one VerdictBatchWait.
func drainEveryVerdict(t *testing.T, mode pgx.QueryExecMode, verdictWait time.Duration) {
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(8))
	names := []string{"complete", "fail", "retry", "wait", "continue"}
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	for _, id := range names {
		rs.Insert("modes", id)
	}
	counter := testkit.NewWorkerCounter()
	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: len(names), Tuning: docket.WorkerTuning{VerdictBatchWait: verdictWait}, Logger: slog.New(log), OnEvent: events.Hook,
		Retry: docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			n := counter.Add(job.RunID)
			switch job.RunID {
			case "complete":
				return docket.Complete(json.RawMessage(`{"by": "complete", "text": "ä\"'"}`))
			case "fail":
				return docket.Fail(nil)
			case "retry":
				return docket.RetryAfter(time.Hour)
			case "wait":
				return docket.WaitExternal(json.RawMessage(`{"by": "wait"}`))
			}
			if n == 1 {
				return docket.Continue(2, json.RawMessage(`{"by": "continue"}`))
			}
			return docket.Complete(nil)
		},
	})
	// Each run's last verdict written, continue's second one
	// included. A poll of the table cannot tell a yielded run from
	// a settled one: the yield sets wake_at to its commit's now(),
	// which is later than the now() of a poll whose transaction
	// started first yet sees the yield, so "wake_at > now()" holds
	// while the run still waits for its second claim.
	events.WaitVerdicts(t, map[string]string{
		"complete": "complete", "fail": "fail", "retry": "retry", "wait": "wait", "continue": "complete",
	})
	testkit.StopWorker(t, w, runResult)

	want := map[string]struct {
		status, checkpoint, state string
		seq                       int64
	}{
		"complete": {"done", "complete", `{"by": "complete", "text": "ä\"'"}`, 1},
		"fail":     {"failed", "fail", `{"n": 0}`, 1},
		"retry":    {"running", "retry", `{"n": 0}`, 1},
		"wait":     {"waiting", "wait", `{"by": "wait"}`, 1},
		"continue": {"done", "complete", `{"by": "continue"}`, 2},
	}
	for _, id := range names {
		run, err := client.FetchRun(testkit.Context(t), docket.Tenant("modes"), id)
		if err != nil {
			t.Fatalf("fetch %s: %v", id, err)
		}
		got := want[id]
		got.status, got.checkpoint, got.state, got.seq = string(run.Status), run.LatestCheckpointType, string(run.State), run.CheckpointSeq
		if got != want[id] {
			t.Errorf("%s: got %+v, want %+v", id, got, want[id])
		}
	}
	if r := rs.Row("retry"); r.WakeAt == nil || r.AdmittedAt != nil {
		t.Errorf("retry: %+v, want a wake time and no admission", r)
	}
	testkit.WorkerExpectQuiet(t, log)
	wmBatchCommitRoundTrips(t, rs)
}

// wmBatchCommitRoundTrips claims two runs and commits both in one
// CommitRuns statement, so a mode whose arrays fail the statement fails
// here instead of being hidden by the worker's fallback to Commit.
func wmBatchCommitRoundTrips(t *testing.T, rs *testkit.RunStore) {
	t.Helper()
	rs.Insert("modes", "batch-done")
	rs.Insert("modes", "batch-later")
	leases := []docket.Lease{}
	for range 2 {
		res := rs.ClaimDue(rs.DbNow(), time.Hour, 10)
		if len(res.Leases) != 1 {
			t.Fatalf("claimed %+v, want one of the batch runs", res)
		}
		leases = append(leases, res.Leases[0])
	}
	later := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
	var params dbgen.CommitRunsParams
	for _, l := range leases {
		schedule, status, state := "terminal", "done", `{"batch": "done"}`
		if l.RunID == "batch-later" {
			schedule, status, state = "at", "running", ""
		}
		params.ScopeKeys = append(params.ScopeKeys, "modes")
		params.RunIds = append(params.RunIds, l.RunID)
		params.ClaimTokens = append(params.ClaimTokens, l.ClaimToken.String())
		params.ExpectedSeqs = append(params.ExpectedSeqs, l.CheckpointSeq)
		params.Steps = append(params.Steps, 1)
		params.States = append(params.States, state)
		params.CheckpointTypes = append(params.CheckpointTypes, "")
		params.Statuses = append(params.Statuses, status)
		params.Schedules = append(params.Schedules, schedule)
		params.WakeAts = append(params.WakeAts, later)
	}
	rows, err := dbgen.New(rs.Pool).CommitRuns(testkit.Context(t), params)
	if err != nil || len(rows) != 2 {
		t.Fatalf("batch commit: %d rows, %v; want 2", len(rows), err)
	}
	if r := rs.Row("batch-done"); r.Status != "done" || r.Seq != 1 {
		t.Errorf("batch-done: %+v, want done at seq 1", r)
	}
	if r := rs.Row("batch-later"); r.Status != "running" || r.WakeAt == nil || !r.WakeAt.Equal(later) || r.Seq != 1 {
		t.Errorf("batch-later: %+v, want due at %v at seq 1", r, later)
	}
}
