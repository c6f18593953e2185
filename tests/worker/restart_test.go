package worker

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pglocal"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// countTolerant returns the number of done runs, or -1 while the server
// cannot answer.
func countTolerant(pool *pgxpool.Pool) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int64
	if err := pool.QueryRow(ctx, `select count(*) from docket_runs where status = 'done'`).Scan(&n); err != nil {
		return -1
	}
	return n
}

func TestWorkerSurvivesAPostgreSQLRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server of its own; skipped with -short")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// A server of its own: restarting the shared one would break the other
	// tests' connections.
	srv, err := pglocal.Start(ctx, pglocal.Options{Logf: t.Logf})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(context.Background()); err != nil {
			t.Errorf("stop PostgreSQL: %v", err)
		}
	})
	url := srv.URL("postgres")
	if err := testkit.URLMigrator(t, url, docket.MigratorConfig{}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	pool := testkit.WorkerPool(t, url, 16)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ids := testkit.WorkerInsertRuns(t, client, 50, "a", "b", "c", "d")

	counter := testkit.NewWorkerCounter()
	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	// The first quarter of the handler calls return at once; the later ones
	// wait for the restart, so it meets a full set of handlers in flight.
	restarted := make(chan struct{})
	var invoked atomic.Int64
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 8, ClaimTTL: 2 * time.Second, PollInterval: 200 * time.Millisecond, Logger: slog.New(log),
		OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			if invoked.Add(1) > int64(len(ids)/4) {
				select {
				case <-restarted:
				case <-ctx.Done():
				}
			}
			return docket.Complete(json.RawMessage(`{"n":1}`))
		},
	})
	events.WaitDone(t, len(ids)/4)
	if err := srv.Restart(ctx); err != nil {
		close(restarted)
		t.Fatalf("restart PostgreSQL: %v", err)
	}
	close(restarted)
	events.WaitFor(t, "every run done after the restart", allDone(pool, len(ids)))
	testkit.StopWorker(t, w, runResult)

	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where status = 'done' and checkpoint_seq = 1 and state = '{"n":1}'`); got != int64(len(ids)) {
		t.Fatalf("%d runs committed exactly once as done, want %d", got, len(ids))
	}
	redone := 0
	for _, id := range ids {
		switch n := counter.Get(id); {
		case n == 0:
			t.Errorf("run %s done without a handler invocation", id)
		case n > 1:
			redone++
		}
	}
	// The restart ends the LISTEN session, so the worker must have met it.
	if got := len(log.Find("docket worker listener failed; reconnecting")); got == 0 {
		t.Errorf("the worker logged no listener failure; did the restart reach it?")
	}
	t.Logf("restarted after %d of %d runs; %d runs handled twice because their claim outlived a failed commit",
		len(ids)/4, len(ids), redone)
}

// allDone is the condition that n runs are done, read from the database
// on each worker event. Across a server restart the events alone cannot
// tell: a commit whose reply the restart cut off is written yet reported
// fenced or failed when retried. The count of done runs only grows, and
// every commit is followed by an event of its job, so the last one is seen.
func allDone(pool *pgxpool.Pool, n int) func([]docket.WorkerEvent) bool {
	return func([]docket.WorkerEvent) bool { return countTolerant(pool) == int64(n) }
}
