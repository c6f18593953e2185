package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A Worker whose claim came back unfilled because a tenant's queued runs
// wait for their rate's next token wakes at that token, not at its poll: a
// tenant limited to 5 per second without burst has its 3 runs handled one
// token apart while the Worker polls once an hour, and each admission is at
// least the rate's step after the one before.
func TestWorkerWakesAtARatesNextToken(t *testing.T) {
	t.Parallel()
	pool := testkit.WorkerPool(t, pgtest.NewDatabase(t), 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	rate := docket.RateLimit{Limit: 5, Period: time.Second}
	if _, err := client.PutTenantRate(ctx, docket.Tenant("t"), rate, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("put tenant rate: %v", err)
	}
	ids := []string{"r1", "r2", "r3"}
	for _, id := range ids {
		if _, err := client.InsertRun(ctx, docket.NewRun{RunID: id, Scope: docket.Tenant("t"),
			GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("insert %s: %v", id, err)
		}
	}
	events := testkit.NewWorkerEvents()
	admitted := make(chan time.Time, len(ids))
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 2, PollInterval: time.Hour, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			var at time.Time
			if err := pool.QueryRow(ctx, `select tenant_admitted_at from docket_runs where run_id = $1`, job.RunID).Scan(&at); err != nil {
				return docket.Fail(fmt.Errorf("read the admission of %s: %w", job.RunID, err))
			}
			admitted <- at
			return docket.Complete(nil)
		},
	})
	events.WaitWritten(t, "complete", ids...)
	testkit.StopWorker(t, w, runResult)
	var times []time.Time
	for range ids {
		times = append(times, <-admitted)
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < rate.Step() {
			t.Fatalf("admissions %v are %s apart, want at least %s", times, gap, rate.Step())
		}
	}
}
