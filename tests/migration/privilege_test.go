package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// forbidden is a statement the application role must not be able to run.
type forbidden struct {
	sql   string
	state string // the SQLSTATE it must raise
}

var forbiddenStatements = []forbidden{
	{`update docket_claim_schedule set unfinished_count = unfinished_count + 1`, guardIntegrityViolation},
	{`update docket_claim_schedule set unfinished_count = 0 where unfinished_count > 0`, guardIntegrityViolation},
	{`update docket_claim_schedule set ring_position = ring_position + 1000`, testkit.GeneratedAlways},
	{`update docket_claim_schedule set ring_position = default`, guardIntegrityViolation},
	{`update docket_claim_schedule set scope_key = scope_key || '-moved'`, guardIntegrityViolation},
	{`insert into docket_claim_schedule (scope_key) values ('acme')`, guardIntegrityViolation},
	{`insert into docket_claim_schedule (scope_key) values ('no-partition')`, guardIntegrityViolation},
	{`delete from docket_claim_schedule`, testkit.InsufficientPrivilege},
	{`delete from docket_claim_partitions`, testkit.InsufficientPrivilege},
	{`truncate docket_claim_schedule`, testkit.InsufficientPrivilege},
	{`truncate docket_runs`, testkit.InsufficientPrivilege},
	{`truncate docket_claim_partitions`, testkit.InsufficientPrivilege},
	{`truncate docket_claim_policy`, testkit.InsufficientPrivilege},
	{`alter table docket_claim_schedule disable trigger user`, testkit.InsufficientPrivilege},
	{`drop trigger docket_claim_schedule_guard_trg on docket_claim_schedule`, testkit.InsufficientPrivilege},
	{`set session_replication_role = replica`, testkit.InsufficientPrivilege},
	{`create temporary table hard_nest (i int)`, testkit.InsufficientPrivilege},
	{`create table public.hard_nest (i int)`, testkit.InsufficientPrivilege},
	{`create table ` + testkit.AppSchema + `.hard_nest (i int)`, testkit.InsufficientPrivilege},
	{`create function ` + testkit.AppSchema + `.hard_nest() returns int language sql as 'select 1'`, testkit.InsufficientPrivilege},
	{`alter function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean) security definer`, testkit.InsufficientPrivilege},
	{`insert into docket_schema_migrations (version) values ('29991231000000')`, testkit.InsufficientPrivilege},
}

func TestLeastPrivilegeRole(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Schema: testkit.AppSchema})
	owner := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, testkit.AppSchema))
	role, password := testkit.CreateRole(t, owner)
	testkit.ApplyGrants(t, owner, testkit.GrantsScript(t), testkit.AppSchema, role, owner.Config().ConnConfig.Database)
	app := testkit.RolePool(t, databaseURL, role, password, testkit.AppSchema)

	client, ops, err := runEveryOperation(t, app)
	if err != nil {
		t.Fatalf("as the application role, %v", err)
	}
	testkit.ExpectRingExact(t, owner)
	unfinished := testkit.QueryInt64(t, owner, `select sum(unfinished_count) from docket_claim_schedule`)
	if unfinished == 0 {
		t.Fatalf("no unfinished work left to guard")
	}

	before := testkit.Snap(t, owner)
	for _, f := range forbiddenStatements {
		_, err := app.Exec(testkit.Context(t), f.sql)
		if got := testkit.GuardSQLState(err); got != f.state {
			t.Errorf("as the application role, %s: %v (SQLSTATE %q), want SQLSTATE %s", f.sql, err, got, f.state)
		}
	}
	testkit.ExpectUnchanged(t, "refused statements of the application role", before, testkit.Snap(t, owner))

	drain(t, client)
	testkit.ExpectRingExact(t, owner)
	if got := testkit.QueryInt64(t, owner, `select count(*) from docket_runs where status in ('running', 'waiting')`); got != 0 {
		t.Fatalf("%d runs unfinished after the worker drained the domain as %s", got, role)
	}
	t.Logf("as a role holding exactly docs/grants.sql: %d operations and a worker drain succeeded; %d forbidden statements refused with %d unfinished runs counted; nothing changed",
		ops, len(forbiddenStatements), unfinished)
}

// runEveryOperation drives every client and admin operation through
// pool, leaving unfinished work behind, and returns the TenantFair client and
// how many calls it made, or the first operation that failed.
func runEveryOperation(t *testing.T, pool *pgxpool.Pool) (client *docket.Client, ops int, failure error) {
	t.Helper()
	ctx := testkit.Context(t)
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(*opFailure)
			if !ok {
				panic(r)
			}
			client, failure = nil, f
		}
	}()
	must := func(what string, err error) {
		ops++
		if err != nil {
			panic(&opFailure{what: what, err: err})
		}
	}
	client, err := docket.Open(ctx, pool, testkit.TenantFairConfig(2))
	must("Open TenantFair", err)
	var legacy *docket.Client
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired})
	must("NewAdmin", err)

	_, err = client.InsertRun(ctx, appRun("acme", "a-1"))
	must("InsertRun", err)
	_, err = client.InsertRuns(ctx, []docket.NewRun{appRun("acme", "a-2"), appRun("acme", "a-3"),
		appRun("globex", "g-1"), appRun("globex", "g-2"), appRun("globex", "g-3")})
	must("InsertRuns", err)
	must("InsertRunTx committed", pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := client.InsertRunTx(ctx, tx, appRun("initech", "i-1"))
		return err
	}))
	rolledBack := errors.New("roll back")
	if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := client.InsertRunsTx(ctx, tx, []docket.NewRun{appRun("umbrella", "u-1")}); err != nil {
			return err
		}
		return rolledBack
	}); !errors.Is(err, rolledBack) {
		must("InsertRunsTx rolled back", err)
	}
	ops++

	_, err = admin.PutClaimPolicyDefault(ctx, 3, docket.ClaimPolicyWriteOptions{})
	must("PutClaimPolicyDefault", err)
	_, err = admin.PutClaimPolicyOverride(ctx, docket.Tenant("acme"), 4, docket.ClaimPolicyWriteOptions{})
	must("PutClaimPolicyOverride", err)
	_, err = admin.PutClaimPolicyOverride(ctx, docket.Tenant("hooli"), 1, docket.ClaimPolicyWriteOptions{})
	must("PutClaimPolicyOverride of a scope without runs", err)
	_, err = client.ResetClaimPolicyOverride(ctx, docket.Tenant("hooli"), docket.ClaimPolicyWriteOptions{})
	must("ResetClaimPolicyOverride", err)
	_, err = admin.PauseTenant(ctx, docket.Tenant("hooli"), docket.ClaimPolicyWriteOptions{})
	must("PauseTenant", err)
	_, err = client.ResumeTenant(ctx, docket.Tenant("hooli"), docket.ClaimPolicyWriteOptions{})
	must("ResumeTenant", err)
	_, err = admin.FetchClaimPolicyDefault(ctx)
	must("FetchClaimPolicyDefault", err)
	// Retention, which every Worker runs by default; a cutoff before any
	// run deletes nothing.
	_, err = client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{FinishedBefore: time.Unix(0, 0)})
	must("DeleteFinishedRuns", err)
	_, err = admin.InspectClaimPolicy(ctx, docket.Tenant("acme"))
	must("InspectClaimPolicy", err)
	must("combined claim served to a waiter", combinedServe(ctx, pool, testkit.TenantFairConfig(2), ""))

	now := time.Now()
	req := docket.ClaimRequest{Now: now, Limit: 7, ClaimTTL: time.Hour, MaxClaimAttempts: 5}
	tr, err := client.TraceClaimDue(ctx, req)
	must("TraceClaimDue", err)
	leases := tr.Result.Leases
	if len(leases) != 7 {
		t.Fatalf("claimed %d leases as the application role, want 7", len(leases))
	}
	_, err = client.RefreshClaim(ctx, leases[0].Holder())
	must("RefreshClaim", err)
	schedules := []docket.Disposition{
		docket.RetainClaim(), docket.ReleaseImmediate(), docket.ReleaseAt(now.Add(-time.Second)),
		docket.ReleaseExternal(), docket.ReleaseTerminal(docket.StatusDone),
	}
	for i, s := range schedules {
		_, err = client.Commit(ctx, docket.CommitRequest{Holder: leases[i].Holder(), ExpectedSeq: leases[i].CheckpointSeq,
			Step: 1, State: json.RawMessage(`{"step":1}`), CheckpointType: "step", Disposition: s})
		must(fmt.Sprintf("Commit schedule %d", i), err)
	}
	released, err := client.ReleaseClaim(ctx, leases[5].Holder())
	must("ReleaseClaim", err)
	if !released {
		t.Fatalf("ReleaseClaim did not release")
	}
	abandoned, err := client.AbandonClaim(ctx, docket.AbandonRequest{Holder: leases[6].Holder(), ExpectedSeq: leases[6].CheckpointSeq, MaxAbandons: 1})
	must("AbandonClaim", err)
	if abandoned.Outcome != docket.AbandonPoisoned {
		t.Fatalf("abandon outcome %q, want poisoned", abandoned.Outcome)
	}
	poisoned := leases[6]
	_, err = client.RetryPoisonedRun(ctx, poisoned.Scope, poisoned.RunID)
	must("RetryPoisonedRun", err)

	// The released run was claimed once: a limit of one attempt poisons it.
	// The other leases of the call are released again.
	var inTx docket.ClaimResult
	must("ClaimDueTx with a poison", pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		inTx, err = client.ClaimDueTx(ctx, tx, docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: 8, ClaimTTL: time.Hour, MaxClaimAttempts: 1})
		if err == nil && len(inTx.Poisoned) == 0 {
			err = errors.New("no poison")
		}
		return err
	}))
	for _, l := range inTx.Leases {
		_, err = client.ReleaseClaim(ctx, l.Holder())
		must("ReleaseClaim of a ClaimDueTx lease", err)
	}
	_, err = client.MutateRun(ctx, leases[3].Scope, leases[3].RunID, func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusRunning}, nil
	})
	must("MutateRun resume", err)
	_, err = client.Cancel(ctx, docket.Tenant("initech"), "i-1")
	must("Cancel", err)
	_, err = client.FetchRun(ctx, docket.Tenant("acme"), "a-1")
	must("FetchRun", err)
	_, err = client.InspectRun(ctx, docket.Tenant("acme"), "a-1")
	must("InspectRun", err)
	_, err = client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenant("globex")})
	must("ListRuns", err)

	// Schedules: nothing is due at the take, so no run is added.
	_, err = admin.AddSchedule(ctx, docket.NewSchedule{Scope: docket.Tenant("acme"), Name: "hourly", GraphID: "g", GraphHash: "h",
		State: json.RawMessage(`{}`), Every: time.Hour})
	must("AddSchedule", err)
	_, err = admin.ListSchedules(ctx, docket.ListSchedulesRequest{})
	must("ListSchedules", err)
	must("TakeDueTicksTx", pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := client.TakeDueTicksTx(ctx, tx, now, 0)
		return err
	}))
	_, err = admin.PauseSchedule(ctx, docket.Tenant("acme"), "hourly", docket.ScheduleWriteOptions{})
	must("PauseSchedule", err)
	_, err = admin.ResumeSchedule(ctx, docket.Tenant("acme"), "hourly", docket.ScheduleWriteOptions{})
	must("ResumeSchedule", err)
	must("RemoveSchedule", admin.RemoveSchedule(ctx, docket.Tenant("acme"), "hourly", docket.ScheduleWriteOptions{}))

	// Legacy takes over and hands back: both engines and the mode switch.
	legacy, err = docket.Open(ctx, pool, testkit.LegacyConfig())
	must("Open Legacy", err)
	_, err = legacy.ClaimDue(ctx, docket.ClaimRequest{Now: now, Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 5})
	must("Legacy ClaimDue", err)
	client, err = docket.Open(ctx, pool, testkit.TenantFairConfig(3))
	must("Open TenantFair after Legacy", err)

	return client, ops, nil
}

// opFailure is the first operation runEveryOperation saw fail.
type opFailure struct {
	what string
	err  error
}

func (f *opFailure) Error() string { return f.what + ": " + f.err.Error() }

func (f *opFailure) Unwrap() error { return f.err }

// drain retries every poisoned run and lets a worker of client finish
// all unfinished work.
func drain(t *testing.T, client *docket.Client) {
	t.Helper()
	ctx, pool := testkit.Context(t), client.Pool()
	rows, err := pool.Query(ctx, `select tenant_id, run_id from docket_runs where poisoned_at is not null`)
	if err != nil {
		t.Fatalf("list poisoned runs: %v", err)
	}
	stuck, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct{ Tenant, RunID string }])
	if err != nil {
		t.Fatalf("read poisoned runs: %v", err)
	}
	for _, p := range stuck {
		if _, err := client.RetryPoisonedRun(ctx, docket.Tenant(p.Tenant), p.RunID); err != nil {
			t.Fatalf("retry %s: %v", p.RunID, err)
		}
	}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 4, ClaimTTL: time.Second, PollInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), OnEvent: events.Hook,
		Handler: func(context.Context, *docket.Job) docket.Result {
			return docket.Complete(json.RawMessage(`{"done":true}`))
		},
	})
	// Checked again on each worker event: the count of unfinished runs only
	// falls, and each commit is followed by an event of its job.
	events.WaitFor(t, "the worker to drain the domain", func([]docket.WorkerEvent) bool {
		var n int64
		err := pool.QueryRow(ctx, `select count(*) from docket_runs where status in ('running', 'waiting')`).Scan(&n)
		return err == nil && n == 0
	})
	testkit.StopWorker(t, w, runResult)
}

// appRun is a due run of tenant.
func appRun(tenant, runID string) docket.NewRun {
	return docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}
}

func TestEveryDocumentedGrantIsNeeded(t *testing.T) {
	t.Parallel()
	variants := grantVariants(testkit.GrantsScript(t))
	if len(variants) < 10 {
		t.Fatalf("found %d privileges in %s", len(variants), testkit.GrantsFile)
	}
	for _, v := range variants {
		t.Run("without "+v.without, func(t *testing.T) {
			t.Parallel()
			databaseURL := pgtest.NewEmptyDatabase(t)
			testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Schema: testkit.AppSchema})
			owner := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, testkit.AppSchema))
			role, password := testkit.CreateRole(t, owner)
			testkit.ApplyGrants(t, owner, v.script, testkit.AppSchema, role, owner.Config().ConnConfig.Database)
			_, ops, err := runEveryOperation(t, testkit.RolePool(t, databaseURL, role, password, testkit.AppSchema))
			if err == nil {
				t.Fatalf("every operation succeeded without %s", v.without)
			}
			// Without USAGE on the schema the search_path resolves to no
			// schema at all, which Open reports as a schema mismatch naming
			// the search_path.
			if strings.HasPrefix(v.without, "usage on schema") {
				if !errors.Is(err, docket.ErrSchemaMismatch) || ops != 1 ||
					!strings.Contains(err.Error(), `the search_path "`+testkit.AppSchema+`" names no schema this role can use`) {
					t.Fatalf("without %s, operation %d failed with %v, want Open's ErrSchemaMismatch naming the search_path", v.without, ops, err)
				}
				return
			}
			want := testkit.InsufficientPrivilege
			if got := testkit.GuardSQLState(err); got != want {
				t.Fatalf("without %s, operation %d failed with %v (SQLSTATE %q), want SQLSTATE %s", v.without, ops, err, got, want)
			}
		})
	}
	t.Logf("each of the %d documented privileges is needed: without it an operation fails", len(variants))
}
