package worker

import (
	"context"
	"fmt"
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
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(capPerTenant))
	e := &batchEnv{rs: &testkit.RunStore{T: t, Pool: pool, Client: client},
		counter: testkit.NewWorkerCounter(), events: testkit.NewWorkerEvents()}
	for id, tenant := range runs {
		e.rs.Insert(tenant, id)
	}
	e.w, e.runResult = testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: concurrency, PollInterval: time.Minute, ClaimTTL: 10 * time.Minute,
		Tuning: docket.WorkerTuning{VerdictBatchWait: time.Minute}, OnEvent: e.events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			e.counter.Add(job.RunID)
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

// TestWorkerVerdictBatchIsWrittenWhenFull runs MaxVerdictBatch runs on a
// worker of two slots whose verdicts wait a minute for a batch. Each
// waiting verdict frees its slot, so the worker goes on claiming beyond
// Concurrency; the batch is written, in one statement, when the last verdict
// fills it, long before the minute passed.
func TestWorkerVerdictBatchIsWrittenWhenFull(t *testing.T) {
	t.Parallel()
	runs := map[string]string{}
	var ids []string
	for i := range docket.MaxVerdictBatch {
		id := fmt.Sprintf("r%02d", i)
		ids = append(ids, id)
		runs[id] = fmt.Sprintf("t%d", i%4)
	}
	e := newBatchEnv(t, docket.MaxVerdictBatch, 2, runs)
	e.events.WaitWritten(t, "complete", ids...)
	verdicts := testkit.WorkerEventsOf(e.events.All(), docket.EventVerdict)
	if len(verdicts) != docket.MaxVerdictBatch {
		t.Fatalf("%d verdict events, want %d", len(verdicts), docket.MaxVerdictBatch)
	}
	for _, ev := range verdicts {
		if ev.Outcome != docket.VerdictWritten || ev.Batch != docket.MaxVerdictBatch {
			t.Fatalf("verdict of %s: outcome %v, batch %d; want written in the one batch of %d",
				ev.RunID, ev.Outcome, ev.Batch, docket.MaxVerdictBatch)
		}
	}
	testkit.StopWorker(t, e.w, e.runResult)
	e.expectDone(t, ids...)
}

// TestWorkerStopWritesWaitingVerdicts runs three runs on a one-slot worker
// whose verdicts wait a minute for a batch: all three are handled while no
// verdict is written and every run is still claimed. Stop writes the waiting
// verdicts at once instead of waiting out the minute.
func TestWorkerStopWritesWaitingVerdicts(t *testing.T) {
	t.Parallel()
	ids := []string{"a", "b", "c"}
	e := newBatchEnv(t, 4, 1, map[string]string{"a": "t", "b": "t", "c": "t"})
	e.events.WaitFor(t, "three handlers started", func(evs []docket.WorkerEvent) bool {
		return len(testkit.WorkerEventsOf(evs, docket.EventHandlerStarted)) == len(ids)
	})
	// The third handler started in the one slot, so the first two verdicts
	// wait; none can be written before the minute or a full batch.
	if n := e.count(docket.EventVerdict); n != 0 {
		t.Fatalf("%d verdicts reported before the batch was due", n)
	}
	for _, id := range ids {
		if r := e.rs.Row(id); r.Status != "running" || r.Token == nil || r.Seq != 0 {
			t.Fatalf("%s: %+v, want still claimed while its verdict waits", id, r)
		}
	}
	testkit.StopWorker(t, e.w, e.runResult)
	verdicts := testkit.WorkerEventsOf(e.events.All(), docket.EventVerdict)
	for _, ev := range verdicts {
		if ev.Outcome != docket.VerdictWritten || ev.Verdict != "complete" || ev.Batch < 1 || ev.Batch > len(ids) {
			t.Fatalf("verdict event %+v, want a complete written in a batch of 1 to %d", ev, len(ids))
		}
	}
	if len(verdicts) != len(ids) {
		t.Fatalf("%d verdicts written, want %d", len(verdicts), len(ids))
	}
	e.expectDone(t, ids...)
}

// TestWorkerVerdictOfATenantAtItsCapDoesNotWait caps a tenant at one
// active run, on a worker whose verdicts wait a minute for a batch. The
// first run's lease leaves the tenant no room under its cap, so its
// verdict does not wait: it is written at once, which admits the second
// run, whose handler starts long before the minute. Stop writes the
// second run's verdict.
func TestWorkerVerdictOfATenantAtItsCapDoesNotWait(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, 1, 2, map[string]string{"first": "t", "second": "t"})
	e.events.WaitFor(t, "both handlers started", func(evs []docket.WorkerEvent) bool {
		return len(testkit.WorkerEventsOf(evs, docket.EventHandlerStarted)) == 2
	})
	evs := e.events.All()
	started := testkit.WorkerEventsOf(evs, docket.EventHandlerStarted)
	first, second := started[0].RunID, started[1].RunID
	if verdicts := testkit.WorkerEventsOf(evs, docket.EventVerdict); len(verdicts) != 1 ||
		verdicts[0].RunID != first || verdicts[0].Outcome != docket.VerdictWritten || verdicts[0].Batch != 1 {
		t.Fatalf("verdicts before the second handler started: %+v, want %s's alone, written", verdicts, first)
	}
	if r := e.rs.Row(first); r.Status != "done" || r.Seq != 1 {
		t.Fatalf("%s: %+v, want done by its prompt verdict", first, r)
	}
	testkit.StopWorker(t, e.w, e.runResult)
	e.expectDone(t, first, second)
}

// TestWorkerPromptVerdictEndsTheWait caps a tenant of three runs at two,
// on a worker of one handler whose verdicts wait a minute. The first lease
// leaves room, so its verdict waits, still holding its admission: the
// second lease then leaves none, and its prompt verdict sends the waiting
// one with it in one statement at once.
func TestWorkerPromptVerdictEndsTheWait(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, 2, 1, map[string]string{"x1": "t", "x2": "t", "x3": "t"})
	e.events.WaitFor(t, "two verdicts written", func(evs []docket.WorkerEvent) bool {
		return len(testkit.WorkerEventsOf(evs, docket.EventVerdict)) == 2
	})
	evs := e.events.All()
	started := testkit.WorkerEventsOf(evs, docket.EventHandlerStarted)
	verdicts := testkit.WorkerEventsOf(evs, docket.EventVerdict)
	for _, v := range verdicts {
		if v.Outcome != docket.VerdictWritten || v.Batch != 2 || (v.RunID != started[0].RunID && v.RunID != started[1].RunID) {
			t.Fatalf("verdicts %+v, want the first two runs' in one statement of 2", verdicts)
		}
	}
	testkit.StopWorker(t, e.w, e.runResult)
	e.expectDone(t, "x1", "x2", "x3")
}
