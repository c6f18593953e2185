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

// TestWorkerWaitingVerdictHoldsTheTenantsAdmission caps a tenant at one
// active run: while the first run's verdict waits for a batch, the run is
// still active, so the claim call made into its freed slot leases nothing
// and the second run stays queued. Once Stop wrote the verdict the first run
// is done and the second is still unclaimed, due for the next worker.
func TestWorkerWaitingVerdictHoldsTheTenantsAdmission(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, 1, 2, map[string]string{"first": "t", "second": "t"})
	// The first call leases one run (the cap admits one); the second, made
	// when that run's handler returned and freed its slot, leases nothing.
	e.events.WaitFor(t, "a claim call after the first handler returned", func(evs []docket.WorkerEvent) bool {
		return len(testkit.WorkerEventsOf(evs, docket.EventClaimed)) >= 2
	})
	claims := testkit.WorkerEventsOf(e.events.All(), docket.EventClaimed)
	if claims[0].Leases != 1 || claims[1].Leases != 0 || claims[1].Err != nil {
		t.Fatalf("claim calls %+v, want one lease, then none", claims)
	}
	handled := testkit.WorkerEventsOf(e.events.All(), docket.EventHandlerStarted)[0].RunID
	queued := map[string]string{"first": "second", "second": "first"}[handled]
	if r := e.rs.Row(queued); r.Token != nil || r.Status != "running" {
		t.Fatalf("%s is %+v, want queued while %s's verdict waits", queued, r, handled)
	}
	testkit.StopWorker(t, e.w, e.runResult)
	e.expectDone(t, handled)
	if r := e.rs.Row(queued); r.Status != "running" || r.Token != nil || r.Seq != 0 {
		t.Errorf("%s: %+v, want queued and never claimed", queued, r)
	}
}
