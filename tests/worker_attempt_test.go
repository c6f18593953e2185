package tests

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// Job.Attempt counts claims since the last commit, so a run retried with
// RetryAt sees 1 on every try; a handler that counts its attempts in the
// run's state with Job.Checkpoint before RetryAt sees them all.
func TestWorkerAttemptCountsClaimsSinceTheLastCommit(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	client := openClient(t, pool, tenantFairConfig(2))
	rs := &rsStore{t: t, pool: pool, client: client}
	rs.insert("t", "flaky")
	var mu sync.Mutex
	var attempts, tries []int
	events := newWkEvents()
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.hook,
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
	events.waitWritten(t, "complete", "flaky")
	wkStop(t, w, runResult)
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 3 || attempts[0] != 1 || attempts[1] != 1 || attempts[2] != 1 ||
		tries[0] != 1 || tries[1] != 2 || tries[2] != 3 {
		t.Fatalf("Attempt per try %v, counted tries %v; want [1 1 1] and [1 2 3]", attempts, tries)
	}
}
