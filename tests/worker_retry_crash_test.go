package tests

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
)

// A worker that dies in the middle of a retried run leaves its count in the
// database: its interrupted attempt ended without a verdict and does not
// count, the worker that steals the expired claim continues at attempt 2 and
// finishes the policy's attempts, and the dead worker's late verdict is
// refused by the claim fence without touching the history.
func TestWorkerRetryPolicySurvivesACrashedWorker(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	const crashedApp = "wk_retry_crashed_worker"
	url := pgtest.NewDatabase(t)
	observer := wkPool(t, url, 4)
	crashedPool, severed := wkSeverablePool(t, url, crashedApp)
	crashedClient := openClient(t, crashedPool, tenantFairConfig(1))
	survivor := openClient(t, wkPool(t, url, 8), tenantFairConfig(1))
	rs := &rsStore{t: t, pool: observer, client: survivor}
	rs.insert("acme", "crash-retry")
	policy := docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Microsecond}

	crashedAttempts, survivorAttempts := newRPAttempts(), newRPAttempts()
	secondStarted, crashedCancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	crashedEvents := newWkEvents()
	crashed, crashedRun := wkStartWorker(t, crashedClient, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, PollInterval: 10 * time.Millisecond, Retry: policy, OnEvent: crashedEvents.hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if crashedAttempts.add(job) == 1 {
				return docket.Fail(errors.New("crashed worker, attempt 1"))
			}
			close(secondStarted)
			<-ctx.Done()
			close(crashedCancelled)
			<-release // a stuck handler that outlives its claim
			return docket.Fail(errors.New("crashed worker, late"))
		},
	})
	wkWaitClosed(t, "the crashed worker's second attempt to start", secondStarted)
	severed.Store(true)
	execSQL(t, observer, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, crashedApp)
	reExpect(t, observer, survivor, docket.Tenant("acme"), "crash-retry", 1, reEntry{1, "error", "crashed worker, attempt 1"})

	survivorEvents := newWkEvents()
	survivorWorker, survivorRun := wkStartWorker(t, survivor, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, PollInterval: 10 * time.Millisecond, Retry: policy, OnEvent: survivorEvents.hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			survivorAttempts.add(job)
			return docket.Fail(fmt.Errorf("survivor, attempt %d", job.Attempt))
		},
	})
	rpWaitWritten(t, survivorEvents, "crash-retry", "fail", 1)
	wkStop(t, survivorWorker, survivorRun)

	wkWaitClosed(t, "the crashed worker to give up its claim", crashedCancelled)
	severed.Store(false)
	close(release)
	crashedEvents.waitFor(t, "the late verdict to be refused", wkFenced("crash-retry", "backoff"))
	wkStop(t, crashed, crashedRun)

	crashedAttempts.expect(t, "crash-retry", 1, 2)
	survivorAttempts.expect(t, "crash-retry", 2, 3)
	run := reExpect(t, observer, survivor, docket.Tenant("acme"), "crash-retry", 3, reEntry{1, "error", "crashed worker, attempt 1"},
		reEntry{2, "error", "survivor, attempt 2"}, reEntry{3, "error", "survivor, attempt 3"})
	if run.Status != docket.StatusFailed {
		t.Fatalf("run %+v, want failed", run)
	}
}
