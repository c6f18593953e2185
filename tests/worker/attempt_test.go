package worker

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Job.Attempt is the persisted handler-attempt number: a run retried with
// RetryAt sees 1, 2, 3 on its tries, matching the count a handler keeps in
// the run's state with Job.Checkpoint (which does not move the counter), and
// the Complete verdict counts the third attempt in the run's Attempt.
func TestWorkerAttemptCountsRetriedHandlerAttempts(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	rs := &testkit.RunStore{T: t, Pool: pool, Client: client}
	rs.Insert("t", "flaky")
	var mu sync.Mutex
	var attempts, tries []int
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval: 10 * time.Millisecond,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			var state struct {
				Tries int `json:"tries"`
			}
			_ = json.Unmarshal(job.State, &state)
			state.Tries++
			mu.Lock()
			attempts, tries = append(attempts, job.Attempt), append(tries, state.Tries)
			mu.Unlock()
			if state.Tries == 3 {
				return docket.Complete(nil)
			}
			next, _ := json.Marshal(state)
			if err := job.Checkpoint(ctx, job.Step, next); err != nil {
				return docket.Fail(err)
			}
			return docket.RetryAt(time.Now())
		}})
	events.WaitWritten(t, "complete", "flaky")
	testkit.StopWorker(t, w, runResult)
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 2 || attempts[2] != 3 ||
		tries[0] != 1 || tries[1] != 2 || tries[2] != 3 {
		t.Fatalf("Attempt per try %v, counted tries %v; want [1 2 3] and [1 2 3]", attempts, tries)
	}
	run, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), "flaky")
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != docket.StatusDone || run.Attempt != 3 || len(run.Errors) != 0 {
		t.Fatalf("completed run: status %s, attempt %d, errors %+v; want done, 3, none", run.Status, run.Attempt, run.Errors)
	}
}
