package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A Worker whose pool lands on read-only sessions (as after a failover
// whose old endpoint stays up as a standby, every session opened there is
// read-only and stays so) recognises the refusal, drops its pool's
// connections and recovers once the address leads to a writable server
// again, instead of retrying on the read-only sessions forever.
func TestWorkerRecoversFromReadOnlyConnections(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewDatabase(t)
	admin := testkit.PoolFor(t, databaseURL)
	pool := testkit.PoolFor(t, databaseURL)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	if _, err := client.InsertRun(ctx, docket.NewRun{RunID: "r1", Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h1",
		State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	database := pool.Config().ConnConfig.Database
	// Every session opened from now on is read-only; the client's current
	// sessions end, so its pool reconnects to read-only ones.
	testkit.ExecSQL(t, admin, fmt.Sprintf(`alter database %s set default_transaction_read_only = on`, database))
	pool.Reset()

	readOnly := make(chan struct{}, 1)
	started := make(chan string, 1)
	events := testkit.NewWorkerEvents()
	testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, PollInterval: time.Hour,
		OnEvent: func(e docket.WorkerEvent) {
			events.Hook(e)
			if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](e.Err); ok && unavailable.Reason == policy.ReasonReadOnlyTransaction {
				select {
				case readOnly <- struct{}{}:
				default:
				}
			}
		},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			started <- job.RunID
			return docket.Complete(nil)
		}})
	select {
	case <-readOnly:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatalf("the Worker's claims were never refused as read-only; events: %v", testkit.WorkerDescribe(events.All()))
	}
	// The address leads to a writable server again: new sessions can
	// write, the read-only ones already open never can.
	testkit.ExecSQL(t, admin, fmt.Sprintf(`alter database %s reset default_transaction_read_only`, database))
	select {
	case id := <-started:
		if id != "r1" {
			t.Fatalf("started %q", id)
		}
	case <-time.After(testkit.WorkerDeadline):
		t.Fatalf("the Worker never recovered from its read-only sessions; events: %v", testkit.WorkerDescribe(events.All()))
	}
	events.WaitWritten(t, "complete", "r1")
}
