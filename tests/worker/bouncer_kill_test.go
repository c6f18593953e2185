package worker

import (
	"context"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// PgBouncer (transaction pooling) killed with SIGKILL twice mid-drain and
// restarted on the same port: the Worker rides through, every run finishes
// with exactly one commit, and every verdict the Worker reports as written
// is a commit of its own (no run is acknowledged twice). Claims whose
// verdicts the kills cut off expire after the Worker's 3 s ClaimTTL and
// are claimed again.
func TestWorkerDrainsThroughAKilledPgBouncer(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewDatabase(t)
	b := testkit.StartBouncer(t, databaseURL, 4)
	pool := testkit.BouncerPool(t, b, 8)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	const perTenant = 50
	tenants := []string{"t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"}
	runs := testkit.WorkerInsertRuns(t, client, perTenant, tenants...)
	events := testkit.NewWorkerEvents()
	counter := testkit.NewWorkerCounter()
	testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 8, ClaimTTL: 3 * time.Second, ListenURL: databaseURL, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			return docket.Complete(nil)
		}})
	for _, done := range []int{len(runs) / 4, len(runs) / 2} {
		events.WaitFor(t, "runs completed before the kill", func(evs []docket.WorkerEvent) bool {
			return testkit.WorkerDistinctWritten(evs, "complete") >= done
		})
		if err := b.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := b.Restart(testkit.Context(t)); err != nil {
			t.Fatalf("restart PgBouncer: %v\n%s", err, b.Output())
		}
	}
	events.WaitDone(t, len(runs))

	testkit.WorkerExpectWrittenOnce(t, events.All(), runs)
	if got := testkit.QueryInt64(t, testkit.PoolFor(t, databaseURL),
		`select count(*) from docket_runs where status = 'done' and checkpoint_seq = 1 and last_commit_token is not null`); got != int64(len(runs)) {
		t.Fatalf("%d of %d runs done by exactly one commit", got, len(runs))
	}
	invocations := 0
	for _, id := range runs {
		if counter.Get(id) < 1 {
			t.Errorf("run %s: its handler never ran", id)
		}
		invocations += counter.Get(id)
	}
	t.Logf("%d runs, %d handler invocations across two PgBouncer kills", len(runs), invocations)
}
