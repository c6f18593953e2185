package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// appPool is an app's pool whose search_path names only its own schemas,
// on a database where Docket lives in schema docket.
func appPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	databaseURL := pgtest.NewEmptyDatabase(t)
	app := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, "app,public"))
	testkit.ExecSQL(t, app, `create schema app; create table app.invoices (id bigint primary key, run_id text not null)`)
	if err := testkit.PoolMigrator(t, app, docket.MigratorConfig{Schema: "docket"}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	return app
}

// appBehindBouncer is appPool's database behind PgBouncer in transaction
// pooling mode: the app's pool, and a pool of size connections through the
// pooler. Behind a pooler the app's search_path comes from the server's
// settings, not from the connection string, so the database's own setting
// names the app's schemas.
func appBehindBouncer(t *testing.T, size int32) (app, pool *pgxpool.Pool) {
	t.Helper()
	app = appPool(t)
	testkit.ExecSQL(t, app, fmt.Sprintf(`alter database %s set search_path = app, public`, app.Config().ConnConfig.Database))
	b := testkit.StartBouncer(t, app.Config().ConnString(), 2)
	return app, testkit.BouncerPool(t, b, size)
}

// With Config.Schema an app whose pool resolves only its own schemas uses
// Docket without changing its search_path: enqueue in the app's own
// transaction next to its own unqualified writes, claim, commit, inspect,
// administer, and drain with a Worker (whose LISTEN channel is the schema's).
func TestConfigSchemaLeavesTheAppsSearchPathAlone(t *testing.T) {
	t.Parallel()
	app := appPool(t)
	if _, err := docket.Open(testkit.Context(t), app, testkit.TenantFairConfig(2)); !errors.Is(err, docket.ErrSchemaMismatch) ||
		!strings.Contains(err.Error(), `no Docket tables in schema "app" (search_path "app,public")`) {
		t.Fatalf("Open without Schema = %v; want a mismatch naming the schema it looked in", err)
	}
	cfg := testkit.TenantFairConfig(2)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, app, cfg)

	tx, err := app.Begin(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(testkit.Context(t)) }()
	if _, err := tx.Exec(testkit.Context(t), `insert into invoices (id, run_id) values (1, 'inv-1')`); err != nil {
		t.Fatal(err)
	}
	if _, err := client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{RunID: "inv-1", Scope: docket.Tenant("acme"),
		GraphID: "send-invoice", GraphHash: "v1", State: json.RawMessage(`{"invoice": 1}`)}); err != nil {
		t.Fatalf("InsertRunTx in the app's transaction: %v", err)
	}
	var path string
	if err := tx.QueryRow(testkit.Context(t), `show search_path`).Scan(&path); err != nil || path != "app,public" {
		t.Fatalf("the app's transaction search_path after InsertRunTx = %q, %v", path, err)
	}
	if _, err := tx.Exec(testkit.Context(t), `insert into invoices (id, run_id) values (2, 'inv-2')`); err != nil {
		t.Fatalf("the app's next unqualified write: %v", err)
	}
	if err := tx.Commit(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}

	res, err := client.ClaimDue(testkit.Context(t), docket.ClaimRequest{Now: time.Now(), Limit: 4, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	if err != nil || len(res.Leases) != 1 {
		t.Fatalf("ClaimDue: %+v, %v", res, err)
	}
	if _, err := client.Commit(testkit.Context(t), docket.CommitRequest{Holder: res.Leases[0].Holder(), ExpectedSeq: res.Leases[0].CheckpointSeq,
		Step: 1, State: json.RawMessage(`{"sent": true}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	run, err := client.FetchRun(testkit.Context(t), docket.Tenant("acme"), "inv-1")
	if err != nil || run.Status != docket.StatusDone {
		t.Fatalf("FetchRun: %+v, %v", run, err)
	}
	if _, err := client.PutClaimPolicyOverride(testkit.Context(t), docket.Tenant("acme"), 3, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PutClaimPolicyOverride: %v", err)
	}
	admin, err := docket.NewAdmin(testkit.Context(t), app, docket.AdminConfig{TenantMode: docket.TenantRequired, Schema: "docket"})
	if err != nil {
		t.Fatalf("NewAdmin with Schema: %v", err)
	}
	if inspected, err := admin.InspectClaimPolicy(testkit.Context(t), docket.Tenant("acme")); err != nil || inspected.EffectiveMaxActiveRuns != 3 {
		t.Fatalf("InspectClaimPolicy: %+v, %v", inspected, err)
	}

	done := make(chan string, 8)
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 2, PollInterval: time.Hour, OnEvent: events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			done <- job.RunID
			return docket.Complete(nil)
		}})
	events.WaitFor(t, "the worker to listen", testkit.WorkerListening)
	if _, err := client.InsertRun(testkit.Context(t), docket.NewRun{RunID: "inv-2", Scope: docket.Tenant("acme"),
		GraphID: "send-invoice", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-done:
		if id != "inv-2" {
			t.Fatalf("the worker ran %s", id)
		}
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the worker was not woken by the insert's notification")
	}
	testkit.StopWorker(t, w, runResult)
	for range 4 {
		if err := app.QueryRow(testkit.Context(t), `show search_path`).Scan(&path); err != nil || path != "app,public" {
			t.Fatalf("a pooled session's search_path became %q, %v", path, err)
		}
	}
}

// Config.Schema works in every pgx execution mode, including those a
// transaction pooler needs: the app's transaction, ClaimDue, a commit and a
// Worker's claim batch all reach schema docket.
func TestConfigSchemaInEveryQueryExecMode(t *testing.T) {
	t.Parallel()
	for _, mode := range testkit.QueryExecModes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			app := appPool(t)
			cfg, err := pgxpool.ParseConfig(app.Config().ConnString())
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			pool, err := pgxpool.NewWithConfig(testkit.Context(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			dcfg := testkit.TenantFairConfig(4)
			dcfg.Schema = "docket"
			client := testkit.OpenClient(t, pool, dcfg)
			tx, err := pool.Begin(testkit.Context(t))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"a", "b", "c"} {
				if _, err := client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{RunID: id, Scope: docket.Tenant("t"),
					GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
					t.Fatalf("InsertRunTx: %v", err)
				}
			}
			if err := tx.Commit(testkit.Context(t)); err != nil {
				t.Fatal(err)
			}
			done := make(chan string, 3)
			w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 3, PollInterval: time.Hour,
				Handler: func(_ context.Context, job *docket.Job) docket.Result {
					done <- job.RunID
					return docket.Complete(nil)
				}})
			seen := map[string]bool{}
			for len(seen) < 3 {
				select {
				case id := <-done:
					seen[id] = true
				case <-time.After(testkit.WorkerDeadline):
					t.Fatalf("the worker ran only %v", seen)
				}
			}
			testkit.StopWorker(t, w, runResult)
			for _, id := range []string{"a", "b", "c"} {
				run, err := client.FetchRun(testkit.Context(t), docket.Tenant("t"), id)
				if err != nil || run.Status != docket.StatusDone {
					t.Fatalf("%s: %+v, %v", id, run, err)
				}
			}
		})
	}
}

// Config.Schema behind PgBouncer in transaction pooling mode: every
// statement's schema scoping rides in its own transaction, so server
// connections shared with the app's sessions never keep Docket's
// search_path, and the app's unqualified statements keep working.
func TestConfigSchemaBehindPgBouncer(t *testing.T) {
	t.Parallel()
	app, pool := appBehindBouncer(t, 6)
	cfg := testkit.TenantFairConfig(3)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, pool, cfg)
	events := testkit.NewWorkerEvents()
	// Its verdicts wait for a batch: a batch's one statement goes through
	// the pooler like any other.
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 3, Tuning: docket.WorkerTuning{VerdictBatchWait: 20 * time.Millisecond},
		OnEvent: events.Hook,
		Handler: func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }})
	var ids []string
	for i := range 12 {
		id := fmt.Sprintf("pb-%02d", i)
		ids = append(ids, id)
		tx, err := pool.Begin(testkit.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback(context.Background()) }()
		if _, err := tx.Exec(testkit.Context(t), `insert into invoices (id, run_id) values ($1, $2)`, i, id); err != nil {
			t.Fatalf("the app's unqualified write through PgBouncer: %v", err)
		}
		if _, err := client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{RunID: id, Scope: docket.Tenant(fmt.Sprintf("t%d", i%3)),
			GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("InsertRunTx through PgBouncer: %v", err)
		}
		if err := tx.Commit(testkit.Context(t)); err != nil {
			t.Fatal(err)
		}
	}
	events.WaitWritten(t, "complete", ids...)
	testkit.StopWorker(t, w, runResult)
	for range 6 {
		var path string
		if err := pool.QueryRow(testkit.Context(t), `select current_setting('search_path')`).Scan(&path); err != nil || path != "app, public" && path != "app,public" {
			t.Fatalf("a server connection's search_path is %q (%v) after Docket's statements", path, err)
		}
	}
	if got := testkit.QueryInt64(t, app, `select count(*) from docket.docket_runs where status = 'done'`); got != int64(len(ids)) {
		t.Fatalf("%d runs done, want %d", got, len(ids))
	}
}

// Periodic runs with Config.Schema behind PgBouncer's transaction pooling:
// every schedule write and read, a tick taken in the app's transaction and
// a Worker's schedule pass, on server connections whose search_path lacks
// the schema. Two schedules have one due tick each and their next one at
// least 58 minutes away, the third none, so the runs are exactly two
// whenever the test runs.
func TestConfigSchemaSchedulesBehindPgBouncer(t *testing.T) {
	t.Parallel()
	app, pool := appBehindBouncer(t, 4)
	cfg := testkit.TenantFairConfig(3)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, pool, cfg)
	ctx := testkit.Context(t)
	scope := docket.Tenant("reports")
	// An interval schedule ticks at Start + k·Every for k >= 1: hourly and
	// nightly tick first at due, a minute or two ago; weekly in a week.
	due := time.Now().Truncate(time.Minute).Add(-time.Minute)
	for name, every := range map[string]time.Duration{"hourly": time.Hour, "nightly": 24 * time.Hour, "weekly": 7 * 24 * time.Hour} {
		start := due.Add(-every)
		if name == "weekly" {
			start = due
		}
		if _, err := client.AddSchedule(ctx, docket.NewSchedule{Scope: scope, Name: name, GraphID: "report", GraphHash: "v1",
			State: json.RawMessage(`{}`), Every: every, Start: start}); err != nil {
			t.Fatalf("AddSchedule %s through PgBouncer: %v", name, err)
		}
	}
	page, err := client.ListSchedules(ctx, docket.ListSchedulesRequest{Limit: 10})
	if err != nil || len(page.Schedules) != 3 || page.Schedules[0].Name != "hourly" || page.Schedules[2].Name != "weekly" {
		t.Fatalf("ListSchedules through PgBouncer: %+v, %v", page, err)
	}
	paused, err := client.PauseSchedule(ctx, scope, "weekly", docket.ScheduleWriteOptions{})
	if err != nil || !paused.Paused {
		t.Fatalf("PauseSchedule through PgBouncer: %+v, %v", paused, err)
	}
	if got, err := client.FetchSchedule(ctx, scope, "weekly"); err != nil || !got.Paused {
		t.Fatalf("FetchSchedule through PgBouncer: %+v, %v", got, err)
	}
	if resumed, err := client.ResumeSchedule(ctx, scope, "weekly", docket.ScheduleWriteOptions{}); err != nil || resumed.Paused {
		t.Fatalf("ResumeSchedule through PgBouncer: %+v, %v", resumed, err)
	}

	// One due tick taken in the app's transaction.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	ticks, err := client.TakeDueTicksTx(ctx, tx, time.Now(), 1)
	if err != nil || len(ticks) != 1 || !ticks[0].At.Equal(due) {
		t.Fatalf("TakeDueTicksTx through PgBouncer: %+v, %v", ticks, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	other := map[string]string{"hourly": "nightly", "nightly": "hourly"}[ticks[0].Schedule]

	// The other one ticks in a Worker's schedule pass.
	ran := make(chan string, 4)
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 2, Schedules: true,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			ran <- job.RunID
			return docket.Complete(nil)
		}})
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case id := <-ran:
			seen[id] = true
		case <-time.After(testkit.WorkerDeadline):
			t.Fatalf("the Worker ran only %v", seen)
		}
	}
	testkit.StopWorker(t, w, runResult)
	want := map[string]bool{ticks[0].RunID: true, docket.ScheduleRunID(scope, other, due): true}
	if !maps.Equal(seen, want) {
		t.Fatalf("the Worker ran %v, want the runs of both due ticks %v", seen, want)
	}
	if got := testkit.QueryInt64(t, app, `select count(*) from docket.docket_runs where status = 'done' and graph_id = 'report'`); got != 2 {
		t.Fatalf("%d schedule runs done, want 2", got)
	}
}

// Claims held ahead of a Worker's handlers (WorkerConfig.ClaimAhead) with
// Config.Schema, behind PgBouncer's transaction pooling, in parked mode:
// a Worker of one handler and two claims ahead leases all three runs of a
// tenant in one call, and when it stops while its handler runs, the two
// held runs never start and are handed back through the pooler with a
// "stop" verdict that keeps their admission. A second such Worker then
// drains them, so every run is handled exactly once.
func TestClaimAheadWithSchemaBehindPgBouncerInParkedMode(t *testing.T) {
	t.Parallel()
	app, pool := appBehindBouncer(t, 6)
	cfg := docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4, ParkDormant: true},
		Schema: "docket"}
	client := testkit.OpenClient(t, pool, cfg)
	ids := []string{"a", "b", "c"}
	for _, id := range ids {
		if _, err := client.InsertRun(testkit.Context(t), docket.NewRun{RunID: id, Scope: docket.Tenant("t"),
			GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatalf("InsertRun %s: %v", id, err)
		}
	}

	counter := testkit.NewWorkerCounter()
	started := make(chan string, len(ids))
	release := make(chan struct{})
	worker := func() (*docket.Worker, <-chan error, *testkit.WorkerEvents) {
		events := testkit.NewWorkerEvents()
		w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, Tuning: docket.WorkerTuning{ClaimAhead: 2}, OnEvent: events.Hook,
			Handler: func(ctx context.Context, job *docket.Job) docket.Result {
				counter.Add(job.RunID)
				started <- job.RunID
				select {
				case <-release:
				case <-ctx.Done():
				}
				return docket.Complete(nil)
			}})
		return w, runResult, events
	}
	w, runResult, events := worker()
	var running string
	select {
	case running = <-started:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("timed out waiting for the first handler")
	}
	events.WaitFor(t, "three runs leased", func(evs []docket.WorkerEvent) bool {
		n := 0
		for _, ev := range evs {
			if ev.Kind == docket.EventClaimed {
				n += ev.Leases
			}
		}
		return n >= len(ids)
	})
	var held []string
	if err := app.QueryRow(testkit.Context(t), `
		select coalesce(array_agg(run_id order by run_id), '{}')
		  from docket.docket_runs
		 where claim_token is not null and run_id <> $1`, running).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if len(held) != 2 {
		t.Fatalf("claimed besides the running %s: %v, want two held ahead", running, held)
	}

	stopCtx, cancel := context.WithTimeout(context.Background(), testkit.WorkerDeadline)
	defer cancel()
	stopResult := make(chan error, 1)
	go func() { stopResult <- w.Stop(stopCtx) }()
	events.WaitWritten(t, "stop", held...)
	close(release)
	events.WaitWritten(t, "complete", running)
	if err := <-stopResult; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runResult; err != nil {
		t.Fatalf("run: %v", err)
	}
	counter.ExpectEach(t, []string{running}, 1)
	for _, id := range held {
		var status string
		var unclaimed, admitted bool
		var attempts int32
		if err := app.QueryRow(testkit.Context(t), `
			select status, claim_token is null, tenant_admitted_at is not null, claim_attempts
			  from docket.docket_runs where run_id = $1`, id).Scan(&status, &unclaimed, &admitted, &attempts); err != nil {
			t.Fatal(err)
		}
		if status != "running" || !unclaimed || !admitted || attempts != 0 {
			t.Fatalf("held %s after the stop: status %s, unclaimed %t, admitted %t, attempts %d; want running, unclaimed, admitted, 0",
				id, status, unclaimed, admitted, attempts)
		}
	}

	w, runResult, events = worker()
	events.WaitWritten(t, "complete", held...)
	testkit.StopWorker(t, w, runResult)
	counter.ExpectEach(t, ids, 1)
	if got := testkit.QueryInt64(t, app, `select count(*) from docket.docket_runs where status = 'done' and claim_token is null`); got != int64(len(ids)) {
		t.Fatalf("%d runs done, want %d", got, len(ids))
	}
}
