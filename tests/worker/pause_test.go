package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A paused tenant's due run is not leased by a listening Worker; resuming
// the tenant wakes the Worker, which leases it without waiting for its
// one-minute poll.
func TestWorkerWakesOnTenantResume(t *testing.T) {
	testWorkerWakesOnResume(t, func(ctx context.Context, client *docket.Client) error {
		_, err := client.PauseTenant(ctx, docket.Tenant("t"), docket.ClaimPolicyWriteOptions{})
		return err
	}, func(ctx context.Context, client *docket.Client) error {
		_, err := client.ResumeTenant(ctx, docket.Tenant("t"), docket.ClaimPolicyWriteOptions{})
		return err
	})
}

// The same for a queue-wide pause: PauseDomain holds the run back and
// ResumeDomain wakes the Worker.
func TestWorkerWakesOnDomainResume(t *testing.T) {
	testWorkerWakesOnResume(t, func(ctx context.Context, client *docket.Client) error {
		_, err := client.PauseDomain(ctx, docket.ClaimPolicyWriteOptions{})
		return err
	}, func(ctx context.Context, client *docket.Client) error {
		_, err := client.ResumeDomain(ctx, docket.ClaimPolicyWriteOptions{})
		return err
	})
}

// testWorkerWakesOnResume pauses, inserts a due run, checks that the
// listening Worker's claims lease nothing, resumes and waits for the run's
// handler and written verdict.
func testWorkerWakesOnResume(t *testing.T, pause, resume func(context.Context, *docket.Client) error) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	if err := pause(ctx, client); err != nil {
		t.Fatalf("pause: %v", err)
	}
	if _, err := client.InsertRun(ctx, docket.NewRun{RunID: "held-back", Scope: docket.Tenant("t"),
		GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	events := testkit.NewWorkerEvents()
	started := make(chan struct{})
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 1, PollInterval: time.Minute, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			close(started)
			return docket.Complete(nil)
		},
	})
	events.WaitFor(t, "the worker to listen and claim once", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerListening(evs) &&
			testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventClaimed }) > 0
	})
	leased := testkit.WorkerCountEvents(events.All(), func(ev docket.WorkerEvent) bool {
		return ev.Kind == docket.EventClaimed && ev.Leases > 0
	})
	if leased != 0 {
		t.Fatalf("%d claim calls leased a paused run", leased)
	}
	if err := resume(ctx, client); err != nil {
		t.Fatalf("resume: %v", err)
	}
	waitClosed(t, "the resumed run to start", started)
	events.WaitWritten(t, "complete", "held-back")
	testkit.StopWorker(t, w, runResult)
}
