package tests

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
)

// A Worker with Retention runs a pass when it starts: it deletes exactly the
// runs finished more than Keep ago, in batches, reports the count in an
// EventRetention, leaves unfinished and recent runs and the ring alone, and
// stops with the worker.
func TestWorkerRetentionDeletesOldFinishedRuns(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	client := openClient(t, pool, tenantFairConfig(4))
	s := &rsStore{t: t, pool: pool, client: client}
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		s.insert("acme", id)
		rtFinish(t, pool, id, "done", time.Now().Add(-2*time.Hour))
	}
	s.insert("acme", "recent")
	rtFinish(t, pool, "recent", "failed", time.Now().Add(-time.Minute))
	s.insert("beta", "waits")
	execSQL(t, pool, `update docket_runs set status = 'waiting', wake_at = null where run_id = 'waits'`)
	ring := rtRing(t, pool)

	events := newWkEvents()
	handled := make(chan string, 1)
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{Concurrency: 1, PollInterval: time.Hour, OnEvent: events.hook,
		Retention: docket.WorkerRetention{Every: time.Hour, Keep: time.Hour, BatchSize: 2},
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			handled <- job.RunID
			return docket.Complete(nil)
		}})
	events.waitFor(t, "a retention pass", func(evs []docket.WorkerEvent) bool {
		return slices.ContainsFunc(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventRetention })
	})
	wkStop(t, w, runResult)

	var passes []docket.WorkerEvent
	for _, ev := range events.all() {
		if ev.Kind == docket.EventRetention {
			passes = append(passes, ev)
		}
	}
	if len(passes) != 1 || passes[0].Deleted != 3 || passes[0].Err != nil {
		t.Fatalf("retention passes %+v, want one that deleted 3", passes)
	}
	if got := rtRunIDs(t, pool); !slices.Equal(got, []string{"recent", "waits"}) {
		t.Fatalf("runs after the pass: %v", got)
	}
	rtExpectRing(t, pool, ring)
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
	migrateOrFail(t, databaseURL, docket.MigrateOptions{Schema: hardAppSchema})
	owner := poolFor(t, migURLWithSearchPath(t, databaseURL, hardAppSchema))
	role, password := hardCreateRole(t, owner)
	hardApplyGrants(t, owner, hardGrantsScript(t), hardAppSchema, role, owner.Config().ConnConfig.Database)
	app := hardRolePool(t, databaseURL, role, password, hardAppSchema)
	client := openClient(t, app, tenantFairConfig(4))
	s := &rsStore{t: t, pool: owner, client: client}
	s.insert("acme", "old")
	rtFinish(t, owner, "old", "done", rtCutoff.Add(-time.Hour))
	s.insert("acme", "live")

	_, err := client.DeleteFinishedRuns(testContext(t), docket.DeleteFinishedRunsOptions{FinishedBefore: rtCutoff})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != hardInsufficientPrivilege {
		t.Fatalf("retention as the application role: %v, want insufficient_privilege", err)
	}
	if got := rtRunIDs(t, owner); !slices.Equal(got, []string{"live", "old"}) {
		t.Fatalf("runs after the refused retention: %v", got)
	}

	execSQL(t, owner, "grant delete on docket_runs to "+pgx.Identifier{role}.Sanitize())
	total, err := client.DeleteFinishedRuns(testContext(t), docket.DeleteFinishedRunsOptions{FinishedBefore: rtCutoff})
	if err != nil || total != 1 {
		t.Fatalf("retention with DELETE granted = %d, %v; want 1", total, err)
	}
	hardExpectRingExact(t, owner)
}
