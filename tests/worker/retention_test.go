package worker

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/internal/testkit"
)

// A Worker with Retention runs a pass when it starts: it deletes exactly the
// runs finished more than Keep ago, in batches, reports the count in an
// EventRetention, leaves unfinished and recent runs and the ring alone, and
// stops with the worker.
func TestWorkerRetentionDeletesOldFinishedRuns(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	s := &testkit.RunStore{T: t, Pool: pool, Client: client}
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		s.Insert("acme", id)
		testkit.RetryFinish(t, pool, id, "done", time.Now().Add(-2*time.Hour))
	}
	s.Insert("acme", "recent")
	testkit.RetryFinish(t, pool, "recent", "failed", time.Now().Add(-time.Minute))
	s.Insert("beta", "waits")
	testkit.ExecSQL(t, pool, `update docket_runs set status = 'waiting', wake_at = null where run_id = 'waits'`)
	ring := testkit.RetryRing(t, pool)

	events := testkit.NewWorkerEvents()
	handled := make(chan string, 1)
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, PollInterval: time.Hour, OnEvent: events.Hook,
		Retention: docket.WorkerRetention{Every: time.Hour, Keep: time.Hour, BatchSize: 2},
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			handled <- job.RunID
			return docket.Complete(nil)
		}})
	events.WaitFor(t, "a retention pass", func(evs []docket.WorkerEvent) bool {
		return slices.ContainsFunc(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventRetention })
	})
	testkit.StopWorker(t, w, runResult)

	var passes []docket.WorkerEvent
	for _, ev := range events.All() {
		if ev.Kind == docket.EventRetention {
			passes = append(passes, ev)
		}
	}
	if len(passes) != 1 || passes[0].Deleted != 3 || passes[0].Err != nil {
		t.Fatalf("retention passes %+v, want one that deleted 3", passes)
	}
	if got := testkit.RetryRunIDs(t, pool); !slices.Equal(got, []string{"recent", "waits"}) {
		t.Fatalf("runs after the pass: %v", got)
	}
	testkit.RetryExpectRing(t, pool, ring)
	select {
	case id := <-handled:
		t.Fatalf("the worker handled %s, but nothing was due", id)
	default:
	}
}

// The application role of docs/grants.sql cannot delete runs: retention as
// that role fails with insufficient_privilege and deletes nothing; with
// DELETE on docket_runs added, as docs/operations.md says, it works and the
// ring stays exact.
func TestRetentionNeedsDeleteBeyondTheApplicationGrants(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, databaseURL, docket.MigrateOptions{Schema: testkit.AppSchema})
	owner := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, testkit.AppSchema))
	role, password := testkit.CreateRole(t, owner)
	testkit.ApplyGrants(t, owner, testkit.GrantsScript(t), testkit.AppSchema, role, owner.Config().ConnConfig.Database)
	app := testkit.RolePool(t, databaseURL, role, password, testkit.AppSchema)
	client := testkit.OpenClient(t, app, testkit.TenantFairConfig(4))
	s := &testkit.RunStore{T: t, Pool: owner, Client: client}
	s.Insert("acme", "old")
	testkit.RetryFinish(t, owner, "old", "done", testkit.RetentionCutoff.Add(-time.Hour))
	s.Insert("acme", "live")

	_, err := client.DeleteFinishedRuns(testkit.Context(t), docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != testkit.InsufficientPrivilege {
		t.Fatalf("retention as the application role: %v, want insufficient_privilege", err)
	}
	if got := testkit.RetryRunIDs(t, owner); !slices.Equal(got, []string{"live", "old"}) {
		t.Fatalf("runs after the refused retention: %v", got)
	}

	testkit.ExecSQL(t, owner, "grant delete on docket_runs to "+pgx.Identifier{role}.Sanitize())
	total, err := client.DeleteFinishedRuns(testkit.Context(t), docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff})
	if err != nil || total != 1 {
		t.Fatalf("retention with DELETE granted = %d, %v; want 1", total, err)
	}
	testkit.ExpectRingExact(t, owner)
}
