package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
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
	pool := wkPool(t, pgtest.NewDatabase(t), 8)
	client := openClient(t, pool, tenantFairConfig(4))
	rs := &rsStore{t: t, pool: pool, client: client}
	rs.insert("t", "blocker")
	rs.insert("t", "quick-0")

	counter := newWkCounter()
	blocked := make(chan struct{})
	events := newWkEvents()
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, PollInterval: time.Minute, OnEvent: events.hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.add(job.RunID)
			if job.RunID == "blocker" {
				close(blocked)
				<-ctx.Done()
				return docket.Yield()
			}
			return docket.Complete(json.RawMessage(`{"quick":true}`))
		},
	})
	wkWaitClosed(t, "the blocker to start", blocked)
	events.waitWritten(t, "complete", "quick-0")
	for i := 1; i < quick; i++ {
		id := fmt.Sprintf("quick-%d", i)
		rs.insert("t", id)
		events.waitWritten(t, "complete", id)
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
		if got := counter.get(id); got != 1 {
			t.Errorf("%s: %d invocations, want 1", id, got)
		}
		if r := rs.row(id); r.Seq != 1 || r.Token != nil || r.AdmittedAt != nil {
			t.Errorf("%s: %+v, want done by one commit, no claim, no marker", id, r)
		}
	}
	if got := counter.get("blocker"); got != 1 {
		t.Errorf("blocker: %d invocations, want 1", got)
	}
	if r := rs.row("blocker"); r.Status != "running" || r.Token != nil || r.AdmittedAt == nil || r.Seq != 1 {
		t.Errorf("blocker: %+v, want handed back at stop with its admission", r)
	}
}
