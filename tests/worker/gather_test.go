package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestWorkerClaimsIntoFreeSlotsWhileOthersStayBusy holds one slot of a
// two-slot worker with a handler that does not return, claimed together
// with a quick run, and then inserts quick runs one at a time: each must be
// claimed into the one free slot and committed, although its claim call
// never finds every slot free and its commit never sees every job of its
// claim call finish.
func TestWorkerClaimsIntoFreeSlotsWhileOthersStayBusy(t *testing.T) {
	t.Parallel()
	const quick = 5
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "blocker")
	rs.Insert("t", "quick-0")

	counter := testkit.NewWorkerCounter()
	blocked := make(chan struct{})
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, PollInterval: time.Minute, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			if job.RunID == "blocker" {
				close(blocked)
				<-ctx.Done()
				return docket.Yield()
			}
			return docket.Complete(json.RawMessage(`{"quick":true}`))
		},
	})
	waitClosed(t, "the blocker to start", blocked)
	events.WaitWritten(t, "complete", "quick-0")
	for i := 1; i < quick; i++ {
		id := fmt.Sprintf("quick-%d", i)
		rs.Insert("t", id)
		events.WaitWritten(t, "complete", id)
	}
	// A stop whose drain window is already over hands the blocker back at once.
	stopCtx, endDrain := context.WithCancel(context.Background())
	endDrain()
	if err := w.Stop(stopCtx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runResult; err != nil {
		t.Fatalf("run: %v", err)
	}

	for i := range quick {
		id := fmt.Sprintf("quick-%d", i)
		if got := counter.Get(id); got != 1 {
			t.Errorf("%s: %d invocations, want 1", id, got)
		}
		if r := rs.Row(id); r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil {
			t.Errorf("%s: %+v, want done by one commit, no claim, no marker", id, r)
		}
	}
	if got := counter.Get("blocker"); got != 1 {
		t.Errorf("blocker: %d invocations, want 1", got)
	}
	if r := rs.Row("blocker"); r.Status != "running" || r.Token != nil || r.AdmittedAt == nil || r.Seq != 1 {
		t.Errorf("blocker: %+v, want handed back at stop with its admission", r)
	}
}
