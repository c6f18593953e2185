package worker

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Every write that makes a run due now wakes a listening Worker at once,
// as an insert does: a MutateRun resume, a ReleaseClaim and a
// RetryPoisonedRun each reach the handler of an idle Worker whose poll
// interval is an hour.
func TestWorkerWakesOnWritesThatMakeARunDue(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "released")
	lease := rs.Claim("t", "released")
	rs.Insert("t", "poisoned")
	testkit.ExecSQL(t, pool, `update docket_runs set claim_attempts = 5 where run_id = 'poisoned'`)
	if res := rs.ClaimDue(rs.DbNow(), time.Hour, 5); len(res.Poisoned) != 1 || res.Poisoned[0].RunID != "poisoned" {
		t.Fatalf("poison setup: %+v", res)
	}
	rs.Insert("t", "waits")
	waiting := rs.Claim("t", "waits")
	if _, err := client.Commit(testkit.Context(t), docket.CommitRequest{Holder: waiting.Holder, ExpectedSeq: waiting.Seq,
		Disposition: docket.ReleaseExternal()}); err != nil {
		t.Fatal(err)
	}

	writes := []struct {
		name, runID string
		write       func() error
	}{
		{"MutateRun resume", "waits", func() error {
			_, err := client.MutateRun(testkit.Context(t), docket.Tenant("t"), "waits", func(docket.Run) (docket.Mutation, error) {
				return docket.Mutation{Status: docket.StatusRunning, State: json.RawMessage(`{"n":1}`)}, nil
			})
			return err
		}},
		{"ReleaseClaim", "released", func() error {
			_, err := client.ReleaseClaim(testkit.Context(t), lease.Holder)
			return err
		}},
		{"RetryPoisonedRun", "poisoned", func() error {
			_, err := client.RetryPoisonedRun(testkit.Context(t), docket.Tenant("t"), "poisoned")
			return err
		}},
	}
	for _, wr := range writes {
		ran := make(chan string, 1)
		w, runResult := testkit.StartIdleWorker(t, client, ran)
		if err := wr.write(); err != nil {
			t.Fatalf("%s: %v", wr.name, err)
		}
		select {
		case got := <-ran:
			if got != wr.runID {
				t.Fatalf("%s: the worker ran %s, want %s", wr.name, got, wr.runID)
			}
		case <-time.After(testkit.WorkerDeadline):
			t.Fatalf("%s: the idle worker was not woken", wr.name)
		}
		testkit.StopWorker(t, w, runResult)
	}
}
