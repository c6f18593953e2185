package tests

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// wkStartIdleWorker starts a worker with an hour-long poll on a domain with
// nothing due and returns once it is idle: it listened, and it made both of
// its start-up claim calls (the first at start, the second when LISTEN took
// effect), so from then on only a notification makes it claim again. Its
// handler sends each run id to ran and completes the run.
func wkStartIdleWorker(t *testing.T, client *docket.Client, ran chan<- string) (*docket.Worker, <-chan error) {
	t.Helper()
	events := newWkEvents()
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{Concurrency: 2, PollInterval: time.Hour, OnEvent: events.hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			ran <- job.RunID
			return docket.Complete(nil)
		}})
	events.waitFor(t, "the worker idle after start-up", func(evs []docket.WorkerEvent) bool {
		claims := wkCountEvents(evs, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventClaimed && ev.Leases == 0 && ev.Poisoned == 0 && ev.Err == nil
		})
		return wkListening(evs) && claims == 2
	})
	return w, runResult
}

// Every write that makes a run due now wakes a listening Worker at once,
// as an insert does: a MutateRun resume, a ReleaseClaim and a
// RetryPoisonedRun each reach the handler of an idle Worker whose poll
// interval is an hour.
func TestWorkerWakesOnWritesThatMakeARunDue(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	client := openClient(t, pool, tenantFairConfig(4))
	rs := &rsStore{t: t, pool: pool, client: client}
	rs.insert("t", "released")
	lease := rs.claim("t", "released")
	rs.insert("t", "poisoned")
	execSQL(t, pool, `update docket_runs set claim_attempts = 5 where run_id = 'poisoned'`)
	if res := rs.claimDue(rs.dbNow(), time.Hour, 5); len(res.Poisoned) != 1 || res.Poisoned[0].RunID != "poisoned" {
		t.Fatalf("poison setup: %+v", res)
	}
	rs.insert("t", "waits")
	waiting := rs.claim("t", "waits")
	if _, err := client.Commit(testContext(t), docket.CommitRequest{Holder: waiting.holder, ExpectedSeq: waiting.seq,
		Schedule: docket.ReleaseExternal()}); err != nil {
		t.Fatal(err)
	}

	writes := []struct {
		name, runID string
		write       func() error
	}{
		{"MutateRun resume", "waits", func() error {
			_, err := client.MutateRun(testContext(t), docket.Tenant("t"), "waits", func(docket.Run) (docket.Mutation, error) {
				return docket.Mutation{Status: docket.StatusRunning, State: json.RawMessage(`{"n":1}`)}, nil
			})
			return err
		}},
		{"ReleaseClaim", "released", func() error {
			_, err := client.ReleaseClaim(testContext(t), lease.holder)
			return err
		}},
		{"RetryPoisonedRun", "poisoned", func() error {
			_, err := client.RetryPoisonedRun(testContext(t), docket.Tenant("t"), "poisoned")
			return err
		}},
	}
	for _, wr := range writes {
		ran := make(chan string, 1)
		w, runResult := wkStartIdleWorker(t, client, ran)
		if err := wr.write(); err != nil {
			t.Fatalf("%s: %v", wr.name, err)
		}
		select {
		case got := <-ran:
			if got != wr.runID {
				t.Fatalf("%s: the worker ran %s, want %s", wr.name, got, wr.runID)
			}
		case <-time.After(wkDeadline):
			t.Fatalf("%s: the idle worker was not woken", wr.name)
		}
		wkStop(t, w, runResult)
	}
}
