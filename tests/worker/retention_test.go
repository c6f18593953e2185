package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A Worker's retention, on by default, runs a pass when it starts: it
// deletes exactly the runs finished longer ago than their status is kept
// (done and cancelled a day, failed a week), in batches, reports the count
// in an EventRetention, leaves unfinished and recent runs and the ring
// alone, and stops with the worker.
func TestWorkerRetentionDeletesOldFinishedRuns(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	s := &testkit.RunStore{T: t, Pool: pool, Client: client}
	for id, finished := range map[string]struct {
		status string
		ago    time.Duration
	}{
		"old-1": {"done", 25 * time.Hour}, "old-2": {"done", 48 * time.Hour}, "old-3": {"cancelled", 25 * time.Hour},
		"old-4": {"failed", 8 * 24 * time.Hour}, "recent": {"done", 23 * time.Hour}, "failed-recently": {"failed", 6 * 24 * time.Hour},
	} {
		s.Insert("acme", id)
		testkit.RetryFinish(t, pool, id, finished.status, time.Now().Add(-finished.ago))
	}
	s.Insert("beta", "waits")
	testkit.ExecSQL(t, pool, `update docket_runs set status = 'waiting', wake_at = null where run_id = 'waits'`)
	ring := testkit.RetryRing(t, pool)

	events := testkit.NewWorkerEvents()
	handled := make(chan string, 1)
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, PollInterval: time.Hour, OnEvent: events.Hook,
		Retention: docket.WorkerRetention{BatchSize: 2},
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			handled <- job.RunID
			return docket.Complete(nil)
		}})
	events.WaitFor(t, "a retention pass", testkit.WorkerRetentionPassed)
	testkit.StopWorker(t, w, runResult)

	var passes []docket.WorkerEvent
	for _, ev := range events.All() {
		if ev.Kind == docket.EventRetention {
			passes = append(passes, ev)
		}
	}
	if len(passes) != 1 || passes[0].Deleted != 4 || passes[0].Err != nil {
		t.Fatalf("retention passes %+v, want one that deleted 4", passes)
	}
	if got := testkit.RetryRunIDs(t, pool); !slices.Equal(got, []string{"failed-recently", "recent", "waits"}) {
		t.Fatalf("runs after the pass: %v", got)
	}
	testkit.RetryExpectRing(t, pool, ring)
	select {
	case id := <-handled:
		t.Fatalf("the worker handled %s, but nothing was due", id)
	default:
	}
}

// The application role of docs/grants.sql may delete finished runs, since
// every Worker retains by default: retention as that role works and the ring
// stays exact; with DELETE revoked, as docs/grants.sql says an append-only
// deployment does, it fails with insufficient_privilege and deletes nothing.
func TestRetentionRunsUnderTheApplicationGrants(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Schema: testkit.AppSchema})
	owner := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, testkit.AppSchema))
	role, password := testkit.CreateRole(t, owner)
	testkit.ApplyGrants(t, owner, testkit.GrantsScript(t), testkit.AppSchema, role, owner.Config().ConnConfig.Database)
	app := testkit.RolePool(t, databaseURL, role, password, testkit.AppSchema)
	client := testkit.OpenClient(t, app, testkit.TenantFairConfig(4))
	s := &testkit.RunStore{T: t, Pool: owner, Client: client}
	for _, id := range []string{"old", "older"} {
		s.Insert("acme", id)
		testkit.RetryFinish(t, owner, id, "done", testkit.RetentionCutoff.Add(-time.Hour))
	}
	s.Insert("acme", "live")

	total, err := client.DeleteFinishedRuns(testkit.Context(t), docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff, BatchSize: 1})
	if err != nil || total != 2 {
		t.Fatalf("retention as the application role = %d, %v; want 2", total, err)
	}
	testkit.ExpectRingExact(t, owner)

	testkit.ExecSQL(t, owner, "revoke delete on docket_runs from "+pgx.Identifier{role}.Sanitize())
	s.Insert("acme", "oldest")
	testkit.RetryFinish(t, owner, "oldest", "done", testkit.RetentionCutoff.Add(-time.Hour))
	_, err = client.DeleteFinishedRuns(testkit.Context(t), docket.DeleteFinishedRunsOptions{FinishedBefore: testkit.RetentionCutoff})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != testkit.InsufficientPrivilege {
		t.Fatalf("retention with DELETE revoked: %v, want insufficient_privilege", err)
	}
	if got := testkit.RetryRunIDs(t, owner); !slices.Equal(got, []string{"live", "oldest"}) {
		t.Fatalf("runs after the refused retention: %v", got)
	}
}

// Several Workers retain one domain at once without double work or lock
// waits: on pools whose lock_timeout is 5 ms, so a statement that waited on
// a lock would fail, three Workers' first passes together delete each old
// run exactly once, and skip, without waiting, the one run another
// transaction holds locked.
func TestWorkerRetentionOfSeveralWorkersNeverWaits(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewDatabase(t)
	owner := testkit.PoolFor(t, databaseURL)
	client := testkit.OpenClient(t, owner, testkit.TenantFairConfig(4))
	var runs []docket.NewRun
	for i := range 120 {
		runs = append(runs, docket.NewRun{RunID: fmt.Sprintf("old-%03d", i), Scope: docket.Tenant(fmt.Sprintf("t%d", i%6)),
			GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)})
	}
	if _, err := client.InsertRuns(testkit.Context(t), runs); err != nil {
		t.Fatal(err)
	}
	for _, run := range runs {
		testkit.RetryFinish(t, owner, run.RunID, "done", time.Now().Add(-48*time.Hour))
	}
	held, err := owner.Begin(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Rollback(context.Background()) }()
	if _, err := held.Exec(testkit.Context(t), `select 1 from docket_runs where run_id = 'old-007' for update`); err != nil {
		t.Fatal(err)
	}

	// Every client is open before any Worker runs: Open locks the policy
	// row, which a running Worker's claim calls take too.
	var clients []*docket.Client
	for range 3 {
		cfg := testkit.PoolConfig(t, databaseURL, 4)
		cfg.ConnConfig.RuntimeParams["lock_timeout"] = "5ms"
		clients = append(clients, testkit.OpenClient(t, testkit.Pool(t, cfg), testkit.TenantFairConfig(4)))
	}
	var passes []<-chan docket.WorkerEvent
	var stops []func()
	for _, worker := range clients {
		pass := make(chan docket.WorkerEvent, 1)
		w, runResult := testkit.StartWorker(t, worker, docket.WorkerConfig{Concurrency: 1, PollInterval: time.Hour,
			Retention: docket.WorkerRetention{BatchSize: 7},
			OnEvent: func(ev docket.WorkerEvent) {
				if ev.Kind == docket.EventRetention {
					select {
					case pass <- ev:
					default:
					}
				}
			},
			Handler: func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }})
		passes = append(passes, pass)
		stops = append(stops, func() { testkit.StopWorker(t, w, runResult) })
	}
	var deleted int64
	for i, pass := range passes {
		select {
		case ev := <-pass:
			if ev.Err != nil {
				t.Fatalf("worker %d's retention pass failed: %v", i, ev.Err)
			}
			deleted += ev.Deleted
		case <-time.After(testkit.WorkerDeadline):
			t.Fatalf("worker %d ran no retention pass", i)
		}
	}
	for _, stop := range stops {
		stop()
	}
	if deleted != 119 {
		t.Fatalf("the passes deleted %d runs in all, want 119", deleted)
	}
	if got := testkit.RetryRunIDs(t, owner); !slices.Equal(got, []string{"old-007"}) {
		t.Fatalf("runs left: %v, want the locked one", got)
	}
}
