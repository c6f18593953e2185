package tests

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// Every write that makes a run due now wakes a listening Worker at once,
// as an insert does: a MutateRun resume, a ReleaseClaim and a
// RetryPoisonedRun each reach the handler although the Worker's poll
// interval is an hour.
func TestWorkerWakesOnWritesThatMakeARunDue(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	client := openClient(t, pool, tenantFairConfig(4))
	rs := &rsStore{t: t, pool: pool, client: client}
	ran := make(chan string, 8)
	var waited atomic.Bool
	log := &wkLogRecorder{}
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{Concurrency: 2, PollInterval: time.Hour, Logger: slog.New(log),
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			ran <- job.RunID
			if job.RunID == "waits" && !waited.Swap(true) {
				return docket.WaitExternal(nil)
			}
			return docket.Complete(nil)
		}})
	expectRan := func(what, id string) {
		t.Helper()
		select {
		case got := <-ran:
			if got != id {
				t.Fatalf("%s: the worker ran %s, want %s", what, got, id)
			}
		case <-time.After(wkDeadline):
			t.Fatalf("%s: the worker was not woken", what)
		}
	}
	wkWaitFor(t, "the worker to listen", func() bool { return len(log.find("docket worker listening for due runs")) > 0 })

	rs.insert("t", "waits")
	expectRan("insert", "waits")
	wkWaitFor(t, "the run to wait", func() bool { return rs.row("waits").Status == "waiting" })
	if _, err := client.MutateRun(testContext(t), docket.Tenant("t"), "waits", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusRunning, State: json.RawMessage(`{"n":1}`)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	expectRan("MutateRun resume", "waits")
	wkStop(t, w, runResult)

	// A claim released by another holder, and a retried poison, with a
	// fresh worker listening.
	rs.insert("t", "released")
	lease := rs.claim("t", "released")
	rs.insert("t", "poisoned")
	execSQL(t, pool, `update docket_runs set claim_attempts = 5 where run_id = 'poisoned'`)
	if res := rs.claimDue(rs.dbNow(), time.Hour, 5); len(res.Poisoned) != 1 || res.Poisoned[0].RunID != "poisoned" {
		t.Fatalf("poison setup: %+v", res)
	}
	log2 := &wkLogRecorder{}
	w2, runResult2 := wkStartWorker(t, client, docket.WorkerConfig{Concurrency: 2, PollInterval: time.Hour, Logger: slog.New(log2),
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			ran <- job.RunID
			return docket.Complete(nil)
		}})
	wkWaitFor(t, "the second worker to listen", func() bool { return len(log2.find("docket worker listening for due runs")) > 0 })
	if released, err := client.ReleaseClaim(testContext(t), lease.holder); err != nil || !released {
		t.Fatalf("ReleaseClaim: %v, %v", released, err)
	}
	expectRan("ReleaseClaim", "released")
	if _, err := client.RetryPoisonedRun(testContext(t), docket.Tenant("t"), "poisoned"); err != nil {
		t.Fatal(err)
	}
	expectRan("RetryPoisonedRun", "poisoned")
	wkStop(t, w2, runResult2)
}
