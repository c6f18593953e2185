package worker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A worker that dies in the middle of a retried run leaves its count in the
// database: its interrupted attempt ended without a verdict and does not
// count, the worker that steals the expired claim continues at attempt 2 and
// finishes the policy's attempts, and the dead worker's late verdict is
// dropped unsent, its claim having expired, without touching the history.
func TestWorkerRetryPolicySurvivesACrashedWorker(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	const crashedApp = "wk_retry_crashed_worker"
	url := pgtest.NewDatabase(t)
	observer := testkit.WorkerPool(t, url, 4)
	crashedPool, severed := severablePool(t, url, crashedApp)
	crashedClient := testkit.OpenClient(t, crashedPool, testkit.TenantFairConfig(1))
	survivor := testkit.OpenClient(t, testkit.WorkerPool(t, url, 8), testkit.TenantFairConfig(1))
	rs := &testkit.RunStore{T: t, Pool: observer, Client: survivor}
	rs.Insert("acme", "crash-retry")
	policy := docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Microsecond}

	crashedAttempts, survivorAttempts := newRPAttempts(), newRPAttempts()
	secondStarted, crashedCancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	crashedEvents := testkit.NewWorkerEvents()
	crashed, crashedRun := testkit.StartWorker(t, crashedClient, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, PollInterval: 10 * time.Millisecond, Retry: policy, OnEvent: crashedEvents.Hook,
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
	waitClosed(t, "the crashed worker's second attempt to start", secondStarted)
	severed.Store(true)
	testkit.ExecSQL(t, observer, `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, crashedApp)
	testkit.RunErrorExpect(t, observer, survivor, docket.Tenant("acme"), "crash-retry", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "crashed worker, attempt 1"})

	survivorEvents := testkit.NewWorkerEvents()
	survivorWorker, survivorRun := testkit.StartWorker(t, survivor, docket.WorkerConfig{
		Concurrency: 1, ClaimTTL: ttl, PollInterval: 10 * time.Millisecond, Retry: policy, OnEvent: survivorEvents.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			survivorAttempts.add(job)
			return docket.Fail(fmt.Errorf("survivor, attempt %d", job.Attempt))
		},
	})
	waitWritten(t, survivorEvents, "crash-retry", "fail", 1)
	testkit.StopWorker(t, survivorWorker, survivorRun)

	waitClosed(t, "the crashed worker to give up its claim", crashedCancelled)
	severed.Store(false)
	close(release)
	crashedEvents.WaitFor(t, "the late verdict to be dropped unsent", testkit.WorkerDropped("crash-retry", "backoff"))
	testkit.StopWorker(t, crashed, crashedRun)

	crashedAttempts.expect(t, "crash-retry", 1, 2)
	survivorAttempts.expect(t, "crash-retry", 2, 3)
	run := testkit.RunErrorExpect(t, observer, survivor, docket.Tenant("acme"), "crash-retry", 3, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "crashed worker, attempt 1"},
		testkit.RunErrorEntry{Attempt: 2, Kind: "error", Error: "survivor, attempt 2"}, testkit.RunErrorEntry{Attempt: 3, Kind: "error", Error: "survivor, attempt 3"})
	if run.Status != docket.StatusFailed {
		t.Fatalf("run %+v, want failed", run)
	}
}
