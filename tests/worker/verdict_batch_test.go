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

// batchWorkerConfig is a worker whose verdicts wait a minute for a batch:
// within a test, a batch is written only once it is full or the worker
// stops. The claim outlives the wait, as the configuration requires.
func batchWorkerConfig(concurrency int, events *testkit.WorkerEvents, handler docket.Handler) docket.WorkerConfig {
	return docket.WorkerConfig{
		Concurrency: concurrency, PollInterval: time.Minute, ClaimTTL: 10 * time.Minute,
		VerdictBatchWait: time.Minute, OnEvent: events.Hook, Handler: handler,
	}
}

// verdictEvents returns the EventVerdict events among events.
func verdictEvents(events []docket.WorkerEvent) []docket.WorkerEvent {
	var out []docket.WorkerEvent
	for _, ev := range events {
		if ev.Kind == docket.EventVerdict {
			out = append(out, ev)
		}
	}
	return out
}

// countKind counts the events of kind among events.
func countKind(events []docket.WorkerEvent, kind docket.WorkerEventKind) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

// TestWorkerVerdictBatchIsWrittenWhenFull runs MaxVerdictBatch runs on a
// worker of two slots whose verdicts wait a minute for a batch. Each
// waiting verdict frees its slot, so the worker goes on claiming beyond
// Concurrency; the batch is written, in one statement, when the last verdict
// fills it, long before the minute passed. Every run is handled and
// committed exactly once.
func TestWorkerVerdictBatchIsWrittenWhenFull(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(docket.MaxVerdictBatch))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	var ids []string
	for i := range docket.MaxVerdictBatch {
		id := fmt.Sprintf("r%02d", i)
		ids = append(ids, id)
		rs.Insert(fmt.Sprintf("t%d", i%4), id)
	}
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, batchWorkerConfig(2, events,
		func(_ context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			return docket.Complete(nil)
		}))
	events.WaitWritten(t, "complete", ids...)
	verdicts := verdictEvents(events.All())
	if len(verdicts) != docket.MaxVerdictBatch {
		t.Fatalf("%d verdict events, want %d", len(verdicts), docket.MaxVerdictBatch)
	}
	for _, ev := range verdicts {
		if ev.Outcome != docket.VerdictWritten || ev.Batch != docket.MaxVerdictBatch {
			t.Fatalf("verdict of %s: outcome %v, batch %d; want written in the one batch of %d",
				ev.RunID, ev.Outcome, ev.Batch, docket.MaxVerdictBatch)
		}
	}
	testkit.StopWorker(t, w, runResult)
	counter.ExpectEach(t, ids, 1)
	for _, id := range ids {
		if r := rs.Row(id); r.Status != "done" || r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil {
			t.Errorf("%s: %+v, want done by one commit, no claim, no marker", id, r)
		}
	}
}

// TestWorkerStopWritesWaitingVerdicts runs three runs on a one-slot worker
// whose verdicts wait a minute for a batch: all three are handled while no
// verdict is written and every run is still claimed. Stop writes the waiting
// verdicts at once instead of waiting out the minute.
func TestWorkerStopWritesWaitingVerdicts(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		rs.Insert("t", id)
	}
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, batchWorkerConfig(1, events,
		func(_ context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			return docket.Complete(nil)
		}))
	events.WaitFor(t, "three handlers started", func(evs []docket.WorkerEvent) bool {
		return countKind(evs, docket.EventHandlerStarted) == len(ids)
	})
	// The third handler started in the one slot, so the first two verdicts
	// wait; none can be written before the minute or a full batch.
	if n := len(verdictEvents(events.All())); n != 0 {
		t.Fatalf("%d verdicts reported before the batch was due", n)
	}
	for _, id := range ids {
		if r := rs.Row(id); r.Status != "running" || r.Token == nil || r.Seq != 0 {
			t.Fatalf("%s: %+v, want still claimed while its verdict waits", id, r)
		}
	}
	testkit.StopWorker(t, w, runResult)
	counter.ExpectEach(t, ids, 1)
	written := 0
	for _, ev := range verdictEvents(events.All()) {
		if ev.Outcome != docket.VerdictWritten || ev.Verdict != "complete" || ev.Batch < 1 || ev.Batch > len(ids) {
			t.Fatalf("verdict event %+v, want a complete written in a batch of 1 to %d", ev, len(ids))
		}
		written++
	}
	if written != len(ids) {
		t.Fatalf("%d verdicts written, want %d", written, len(ids))
	}
	for _, id := range ids {
		if r := rs.Row(id); r.Status != "done" || r.Seq != 1 || r.Token != nil {
			t.Errorf("%s: %+v, want done by one commit", id, r)
		}
	}
}

// TestWorkerWaitingVerdictHoldsTheTenantsAdmission caps a tenant at one
// active run: while the first run's verdict waits for a batch, the run is
// still active, so the claim call made into its freed slot leases nothing
// and the second run stays queued. Once Stop wrote the verdict the first run
// is done and the second is still unclaimed, due for the next worker.
func TestWorkerWaitingVerdictHoldsTheTenantsAdmission(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(1))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "first")
	rs.Insert("t", "second")
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, batchWorkerConfig(2, events,
		func(_ context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			return docket.Complete(nil)
		}))
	// The first call leases first (the cap admits one); the second, made
	// when first's handler returned and freed its slot, leases nothing.
	events.WaitFor(t, "a claim call after first's handler returned", func(evs []docket.WorkerEvent) bool {
		return countKind(evs, docket.EventClaimed) >= 2
	})
	var claims []docket.WorkerEvent
	for _, ev := range events.All() {
		if ev.Kind == docket.EventClaimed {
			claims = append(claims, ev)
		}
	}
	if claims[0].Leases != 1 || claims[1].Leases != 0 || claims[1].Err != nil {
		t.Fatalf("claim calls %+v, want one lease, then none", claims)
	}
	if r := rs.Row("second"); r.Token != nil || r.Status != "running" {
		t.Fatalf("second is %+v, want queued while first's verdict waits", r)
	}
	testkit.StopWorker(t, w, runResult)
	counter.ExpectEach(t, []string{"first"}, 1)
	if r := rs.Row("first"); r.Status != "done" || r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil {
		t.Errorf("first: %+v, want done by one commit", r)
	}
	if r := rs.Row("second"); r.Status != "running" || r.Token != nil || r.Seq != 0 {
		t.Errorf("second: %+v, want queued and never claimed", r)
	}
}
