package worker

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// batchEnv is a TenantFair domain with a worker whose verdicts wait a
// minute for a batch, so that within a test a batch is written only once it
// is full or the worker stops; its handler completes every run.
type batchEnv struct {
	rs        *testkit.RunStore
	counter   *testkit.WorkerCounter
	events    *testkit.WorkerEvents
	w         *docket.Worker
	runResult <-chan error
}

// newBatchEnv inserts runs (run id to tenant) under a cap of capPerTenant,
// then starts the worker with concurrency slots. The claim outlives the
// verdicts' wait, as the configuration requires.
func newBatchEnv(t *testing.T, capPerTenant, concurrency int, runs map[string]string) *batchEnv {
	return newBatchEnvOf(t, testkit.TenantFairConfig(capPerTenant), runs, docket.WorkerConfig{Concurrency: concurrency})
}

// newBatchEnvOf is newBatchEnv with the client's config clientCfg and the
// worker's Concurrency and Tuning taken from cfg; cfg.Handler, when set,
// is called (after the count) before each run completes.
func newBatchEnvOf(t *testing.T, clientCfg docket.Config, runs map[string]string, cfg docket.WorkerConfig) *batchEnv {
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, clientCfg)
	e := &batchEnv{rs: &testkit.RunStore{T: t, Pool: pool, Client: client},
		counter: testkit.NewWorkerCounter(), events: testkit.NewWorkerEvents()}
	for id, tenant := range runs {
		e.rs.Insert(tenant, id)
	}
	tuning := cfg.Tuning
	tuning.VerdictBatchWait = time.Minute
	e.w, e.runResult = testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: cfg.Concurrency, PollInterval: time.Minute, ClaimTTL: 10 * time.Minute,
		Tuning: tuning, OnEvent: e.events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			e.counter.Add(job.RunID)
			if cfg.Handler != nil {
				cfg.Handler(ctx, job)
			}
			return docket.Complete(nil)
		},
	})
	return e
}

// count counts the events of kind so far.
func (e *batchEnv) count(kind docket.WorkerEventKind) int {
	return len(testkit.WorkerEventsOf(e.events.All(), kind))
}

// expectDone fails unless each of ids was handled once and is done by one
// commit, with no claim and no admission left.
func (e *batchEnv) expectDone(t *testing.T, ids ...string) {
	t.Helper()
	e.counter.ExpectEach(t, ids, 1)
	for _, id := range ids {
		if r := e.rs.Row(id); r.Status != "done" || r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil {
			t.Errorf("%s: %+v, want done by one commit, no claim, no marker", id, r)
		}
	}
}

// TestWorkerVerdictBatchIsWrittenWhenFull runs more than MaxVerdictBatch
// runs on a worker of two slots whose verdicts wait a minute for a batch.
// Each waiting verdict frees its slot, so the worker goes on claiming beyond
// Concurrency, and its claim calls lease all they ask for while more runs
// are due than its claim slots (10): a statement of MaxVerdictBatch
// verdicts or more is written once they wait (those that arrived while
// its leader took the lead join it), long before the minute passed. Stop
// writes the rest.
func TestWorkerVerdictBatchIsWrittenWhenFull(t *testing.T) {
	t.Parallel()
	runs := map[string]string{}
	for i := range docket.MaxVerdictBatch + 20 {
		runs[fmt.Sprintf("r%02d", i)] = fmt.Sprintf("t%d", i%4)
	}
	e := newBatchEnv(t, docket.MaxVerdictBatch, 2, runs)
	e.events.WaitFor(t, "a full batch written", func(evs []docket.WorkerEvent) bool {
		return slices.ContainsFunc(testkit.WorkerEventsOf(evs, docket.EventVerdict), func(ev docket.WorkerEvent) bool {
			return ev.Batch >= docket.MaxVerdictBatch
		})
	})
	testkit.StopWorker(t, e.w, e.runResult)
	var handled []string
	for _, ev := range testkit.WorkerEventsOf(e.events.All(), docket.EventHandlerStarted) {
		handled = append(handled, ev.RunID)
	}
	e.expectDone(t, handled...)
	for _, ev := range testkit.WorkerEventsOf(e.events.All(), docket.EventVerdict) {
		if ev.Outcome != docket.VerdictWritten {
			t.Errorf("verdict of %s: %v, want written", ev.RunID, ev.Outcome)
		}
	}
}

// TestWorkerStopWritesWaitingVerdicts runs ten runs on a one-slot Legacy
// worker that holds none ahead and whose verdicts wait a minute for a
// batch. Its claim calls lease the one run they ask for (nothing else
// locks a run), and the third handler holds the one slot, so no call comes
// back short: the first two verdicts wait, their runs still claimed. Stop
// writes the waiting verdicts at once instead of waiting out the minute,
// and the runs it never started stay due for another worker.
func TestWorkerStopWritesWaitingVerdicts(t *testing.T) {
	t.Parallel()
	runs := map[string]string{}
	for i := range 10 {
		runs[fmt.Sprintf("r%d", i)] = "t"
	}
	third, release := make(chan struct{}), make(chan struct{})
	var handled atomic.Int32
	e := newBatchEnvOf(t, testkit.LegacyConfig(), runs, docket.WorkerConfig{
		Concurrency: 1, Tuning: docket.WorkerTuning{ClaimAhead: docket.NoClaimAhead},
		Handler: func(context.Context, *docket.Job) docket.Result {
			if handled.Add(1) == 3 {
				close(third)
				<-release
			}
			return docket.Result{}
		},
	})
	<-third
	started := testkit.WorkerEventsOf(e.events.All(), docket.EventHandlerStarted)
	if n := e.count(docket.EventVerdict); n != 0 || len(started) != 3 {
		t.Fatalf("%d verdicts reported and %d handlers started, want none before the batch is due and 3", n, len(started))
	}
	ids := []string{started[0].RunID, started[1].RunID, started[2].RunID}
	for _, id := range ids {
		if r := e.rs.Row(id); r.Status != "running" || r.Token == nil || r.Seq != 0 {
			t.Fatalf("%s: %+v, want still claimed while its verdict waits", id, r)
		}
	}
	close(release)
	testkit.StopWorker(t, e.w, e.runResult)
	// The worker may have started more runs before Stop took effect.
	ids = ids[:0]
	for _, ev := range testkit.WorkerEventsOf(e.events.All(), docket.EventHandlerStarted) {
		ids = append(ids, ev.RunID)
	}
	verdicts := testkit.WorkerEventsOf(e.events.All(), docket.EventVerdict)
	for _, ev := range verdicts {
		if ev.Outcome != docket.VerdictWritten || ev.Verdict != "complete" || ev.Batch < 1 || ev.Batch > len(ids) {
			t.Fatalf("verdict event %+v, want a complete written in a batch of 1 to %d", ev, len(ids))
		}
	}
	if len(verdicts) != len(ids) {
		t.Fatalf("%d verdicts written, want one per handled run, %d", len(verdicts), len(ids))
	}
	e.expectDone(t, ids...)
	for id := range runs {
		if e.counter.Get(id) == 0 {
			if r := e.rs.Row(id); r.Status != "running" || r.Token != nil || r.Seq != 0 {
				t.Errorf("%s: %+v, want due and never claimed", id, r)
			}
		}
	}
}

// TestWorkerVerdictOfATenantAtItsCapDoesNotWait caps a tenant at one
// active run, on a worker of two slots whose verdicts wait a minute for a
// batch. Its first claim call leases one run of the two it asked for: the
// cap holds the other back, so the first run's verdict does not wait. It
// is written at once, which admits the second run, whose handler starts
// long before the minute.
func TestWorkerVerdictOfATenantAtItsCapDoesNotWait(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, 1, 2, map[string]string{"first": "t", "second": "t"})
	e.events.WaitFor(t, "both handlers started", func(evs []docket.WorkerEvent) bool {
		return len(testkit.WorkerEventsOf(evs, docket.EventHandlerStarted)) == 2
	})
	started := testkit.WorkerEventsOf(e.events.All(), docket.EventHandlerStarted)
	first, second := started[0].RunID, started[1].RunID
	// The second run was admitted once the first's verdict committed; the
	// event that reports the write may come after its handler started.
	e.events.WaitWritten(t, "complete", first)
	for _, v := range testkit.WorkerEventsOf(e.events.All(), docket.EventVerdict) {
		if v.RunID == first && v.Batch != 1 {
			t.Fatalf("verdict of %s: %+v, want written alone", first, v)
		}
	}
	if r := e.rs.Row(first); r.Status != "done" || r.Seq != 1 {
		t.Fatalf("%s: %+v, want done by its verdict", first, r)
	}
	testkit.StopWorker(t, e.w, e.runResult)
	e.expectDone(t, first, second)
}

// TestWorkerShortClaimCallEndsTheVerdictsWait caps a tenant of three runs
// at two, on a worker of one handler that holds no run ahead and whose
// verdicts wait a minute. The first two runs are claimed by calls that
// lease all they ask for, so their verdicts wait, still holding both
// admissions; the next call then leases nothing, which ends their wait:
// they are written together at once, and the third run is handled long
// before the minute. (The third's verdict waits until the next call comes
// back short, or Stop.)
func TestWorkerShortClaimCallEndsTheVerdictsWait(t *testing.T) {
	t.Parallel()
	e := newBatchEnvOf(t, testkit.TenantFairConfig(2), map[string]string{"x1": "t", "x2": "t", "x3": "t"}, docket.WorkerConfig{
		Concurrency: 1, Tuning: docket.WorkerTuning{ClaimAhead: docket.NoClaimAhead}})
	e.events.WaitFor(t, "three handlers started", func(evs []docket.WorkerEvent) bool {
		return len(testkit.WorkerEventsOf(evs, docket.EventHandlerStarted)) == 3
	})
	started := testkit.WorkerEventsOf(e.events.All(), docket.EventHandlerStarted)
	// The third run was admitted once the first two verdicts committed; the
	// events that report the write may come after its handler started.
	e.events.WaitWritten(t, "complete", started[0].RunID, started[1].RunID)
	for _, v := range testkit.WorkerEventsOf(e.events.All(), docket.EventVerdict) {
		if (v.RunID == started[0].RunID || v.RunID == started[1].RunID) && v.Batch != 2 {
			t.Fatalf("verdict %+v, want the first two runs' in one statement of 2", v)
		}
	}
	testkit.StopWorker(t, e.w, e.runResult)
	e.expectDone(t, "x1", "x2", "x3")
}
