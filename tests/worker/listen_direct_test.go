package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Behind PgBouncer's transaction pooling a Worker whose ListenURL is a
// direct connection to the server hears the domain's channel: an insert
// through the pooler wakes it and an operator's cancel through the pooler
// ends its handler, though its poll is an hour away and its heartbeat
// longer than the test waits. The latencies are logged.
func TestWorkerListensOnADirectConnectionBehindPgBouncer(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewDatabase(t)
	b := testkit.StartBouncer(t, databaseURL, 4)
	client := testkit.OpenClient(t, testkit.BouncerPool(t, b, 8), testkit.TenantFairConfig(4))
	events := testkit.NewWorkerEvents()
	started := make(chan string, 4)
	cancelled := make(chan error, 1)
	testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, PollInterval: time.Hour, ClaimTTL: 2 * time.Minute, ListenURL: databaseURL, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			started <- job.RunID
			if job.RunID == "slow" {
				<-ctx.Done()
				cancelled <- context.Cause(ctx)
			}
			return docket.Complete(nil)
		},
	})
	events.WaitFor(t, "the LISTEN session", testkit.WorkerListening)
	ctx := testkit.Context(t)
	waitStarted := func(runID string) {
		t.Helper()
		select {
		case id := <-started:
			if id != runID {
				t.Fatalf("handler started %q, want %q", id, runID)
			}
		case <-time.After(testkit.WorkerDeadline):
			t.Fatalf("%s never started: the insert's notification did not reach the Worker", runID)
		}
	}
	insert := func(runID string) {
		t.Helper()
		if _, err := client.InsertRun(ctx, docket.NewRun{RunID: runID, Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h1",
			State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}

	at := time.Now()
	insert("fast")
	waitStarted("fast")
	wake := time.Since(at)

	insert("slow")
	waitStarted("slow")
	at = time.Now()
	if _, err := client.Cancel(ctx, docket.Tenant("acme"), "slow"); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-cancelled:
		if !errors.Is(cause, docket.ErrRunCancelled) {
			t.Fatalf("the handler's context ended with %v, want ErrRunCancelled", cause)
		}
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the cancel's notification never reached the Worker")
	}
	t.Logf("behind PgBouncer with ListenURL: insert to handler start %v, cancel to handler context end %v", wake, time.Since(at))
}

// A ListenURL pgx cannot parse is refused by NewWorker.
func TestWorkerRefusesAnInvalidListenURL(t *testing.T) {
	t.Parallel()
	client := testkit.OpenClient(t, testkit.PoolFor(t, pgtest.NewDatabase(t)), testkit.TenantFairConfig(4))
	_, err := docket.NewWorker(client, docket.WorkerConfig{Concurrency: 1, ListenURL: "postgres://host:notaport/db",
		Handler: func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }})
	if !errors.Is(err, docket.ErrInvalidConfig) {
		t.Fatalf("NewWorker with an invalid ListenURL: %v, want ErrInvalidConfig", err)
	}
}
