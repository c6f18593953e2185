package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/dockettest"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// statementRecorder is a pgx tracer that records which generated statements
// a pool sent, by their sqlc name, and the first error of each.
type statementRecorder struct {
	mu     sync.Mutex
	sent   map[string]int
	failed map[string]error
}

type recordedSQL struct{}

func newStatementRecorder() *statementRecorder {
	return &statementRecorder{sent: map[string]int{}, failed: map[string]error{}}
}

// note records one statement's end. A statement cut short by a cancel (a
// Worker's stop, context.Canceled: a background pass in flight when the
// scenario stops its Worker; or the server's query_canceled: the combined
// claim whose wait the scenario cancels) tells nothing of the schema either
// way, so it counts as neither sent nor failed.
func (r *statementRecorder) note(sql string, err error) {
	name := testkit.StatementName(sql)
	if name == "" || errors.Is(err, context.Canceled) || cancelledByServer(err) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent[name]++
	if err != nil && r.failed[name] == nil {
		r.failed[name] = err
	}
}

// cancelledByServer reports whether err is a statement the server
// cancelled on request.
func cancelledByServer(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == sqlstateQueryCanceled
}

// TraceQueryStart implements pgx.QueryTracer.
func (r *statementRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, recordedSQL{}, data.SQL)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (r *statementRecorder) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	sql, _ := ctx.Value(recordedSQL{}).(string)
	r.note(sql, data.Err)
}

// TraceBatchStart implements pgx.BatchTracer.
func (r *statementRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (r *statementRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	r.note(data.SQL, data.Err)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (r *statementRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Every statement the facade can send (the generated statements its
// packages name, found in their source) goes through the public API with
// Config.Schema on a pool whose search_path lacks the schema, in every pgx
// execution mode, and none fails.
func TestConfigSchemaEveryStatementInEveryQueryExecMode(t *testing.T) {
	t.Parallel()
	required := testkit.FacadeStatements(t)
	for _, mode := range testkit.QueryExecModes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			databaseURL := pgtest.NewEmptyDatabase(t)
			recorder := newStatementRecorder()
			cfg, err := pgxpool.ParseConfig(testkit.MigrationURLWithSearchPath(t, databaseURL, "app,public"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			cfg.ConnConfig.Tracer = recorder
			pool, err := pgxpool.NewWithConfig(testkit.Context(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			testkit.ExecSQL(t, pool, `create schema app`)
			everyStatement(t, pool)
			recorder.mu.Lock()
			defer recorder.mu.Unlock()
			var missing []string
			for _, name := range required {
				if recorder.sent[name] == 0 {
					missing = append(missing, name)
				}
			}
			if len(missing) > 0 {
				t.Errorf("the scenario never sent %d of the facade's statements: %s", len(missing), strings.Join(missing, ", "))
			}
			for name, err := range recorder.failed {
				t.Errorf("%s failed: %v", name, err)
			}
		})
	}
}

// everyStatement drives the public API over schema docket through pool:
// migrations, both engines, the run store, the lifecycle, the policy and
// console reads, schedules, retention, a Worker and dockettest.
func everyStatement(t *testing.T, pool *pgxpool.Pool) {
	ctx := testkit.Context(t)
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// Migrations: up, one step down and up again, then a schema migrated by
	// an earlier release into dbmate's ledger, which the migrator adopts.
	must("migrate up", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "docket"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	must("migrate down", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "docket"}).Migrate(ctx, docket.MigrateDown, docket.MigrateOptions{}))
	must("migrate up again", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "docket"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	must("migrate old", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "old"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	testkit.ExecSQL(t, pool, `create table old.schema_migrations (version varchar(128) primary key);
insert into old.schema_migrations select version from old.docket_schema_migrations;
drop table old.docket_schema_migrations`)
	must("migrate old adopting dbmate's ledger", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "old"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	// A schema another tool migrated: no ledger at all, then adopted.
	must("migrate outside", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "adopted"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}))
	testkit.ExecSQL(t, pool, `drop table adopted.docket_schema_migrations`)
	_, err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "adopted"}).Status(ctx, docket.MigrateOptions{})
	must("status outside the ledger", err)
	must("adopt", testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "adopted"}).Migrate(ctx, docket.MigrateAdopt, docket.MigrateOptions{}))
	domains, err := docket.ListDomains(ctx, pool)
	must("list domains", err)
	if len(domains) != 3 {
		t.Fatalf("ListDomains = %q", domains)
	}

	// Legacy first, then TenantFair on the same schema, which adopts the
	// legacy claims.
	legacyCfg := docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}, Schema: "docket"}
	legacy := testkit.OpenClient(t, pool, legacyCfg)
	// Claims look a minute ahead, so every run inserted below is due to
	// them however slowly the machine runs.
	now := time.Now().Add(time.Minute)
	newRun := func(tenant, id string) docket.NewRun {
		return docket.NewRun{RunID: id, Scope: docket.Tenant(tenant), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}
	}
	_, err = legacy.InsertRun(ctx, newRun("a", "legacy-1"))
	must("legacy insert", err)
	res, err := legacy.ClaimDue(ctx, docket.ClaimRequest{Now: now, Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	must("legacy claim", err)
	if len(res.Leases) != 1 {
		t.Fatalf("legacy claim leased %d runs", len(res.Leases))
	}
	_, err = legacy.TraceClaimDue(ctx, docket.ClaimRequest{Now: now, Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	must("legacy trace claim", err)
	oneRunWorker(t, legacy, "legacy-2")
	// The queue gauges' statement: a collection of the provider a client
	// registered them on.
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	gaugesCfg := legacyCfg
	gaugesCfg.MeterProvider = provider
	testkit.OpenClient(t, pool, gaugesCfg)
	if got := testkit.TelemetryCollect(t, ctx, reader); len(got.Points["docket.queue.runs"]) != 6 {
		t.Fatalf("queue gauges collected %v", got.Points["docket.queue.runs"])
	}

	fairCfg := docket.Config{TenantMode: docket.TenantRequired, ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2, ParkDormant: true},
		Schema: "docket", Tuning: docket.ClientTuning{AsyncClaimCommit: true}}
	client := testkit.OpenClient(t, pool, fairCfg)
	if err := combinedWait(ctx, pool, fairCfg, "docket."); err != nil {
		t.Fatalf("combined claim cancelled while it waits: %v", err)
	}
	if err := combinedServe(ctx, pool, fairCfg, "docket."); err != nil {
		t.Fatalf("combined claim served to a waiter: %v", err)
	}
	oneRunWorker(t, client, "fair-1")
	// A walk of its own in the app's transaction, an hour before anything
	// is due.
	claimTx, err := pool.Begin(ctx)
	must("begin the claim's transaction", err)
	_, err = client.ClaimDueTx(ctx, claimTx, docket.ClaimRequest{Now: now.Add(-time.Hour), Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	must("claim in the app's transaction", err)
	must("commit the claim's transaction", claimTx.Commit(ctx))

	// The run store.
	_, err = client.InsertRun(ctx, newRun("a", "r1"))
	must("insert", err)
	withMaxAttempts := newRun("b", "r4")
	withMaxAttempts.MaxAttempts = 3
	_, err = client.InsertRuns(ctx, []docket.NewRun{newRun("a", "r2"), newRun("b", "r3"), withMaxAttempts, newRun("c", "r5")})
	must("insert many", err)
	if r4, err := client.FetchRun(ctx, docket.Tenant("b"), "r4"); err != nil || r4.MaxAttempts != 3 {
		t.Fatalf("r4: MaxAttempts %d, %v; want 3", r4.MaxAttempts, err)
	}
	tx, err := pool.Begin(ctx)
	must("begin", err)
	_, err = client.InsertRunTx(ctx, tx, newRun("c", "r6"))
	must("insert in the app's transaction", err)
	must("commit", tx.Commit(ctx))
	// Unique runs, due in a day so no claim below takes them: a duplicate
	// reads the run that holds its key, alone and in a batch.
	unique := func(id string) docket.NewRun {
		run := newRun("u", id)
		run.WakeAt = now.Add(24 * time.Hour)
		run.Unique = &docket.Uniqueness{Key: "daily", Period: 24 * time.Hour}
		return run
	}
	_, err = client.InsertRun(ctx, unique("u1"))
	must("unique insert", err)
	if held, err := client.InsertRun(ctx, unique("u2")); !errors.Is(err, docket.ErrUniqueRunExists) || held.RunID != "u1" {
		t.Fatalf("duplicate unique insert = %q, %v", held.RunID, err)
	}
	if ids, err := client.InsertRuns(ctx, []docket.NewRun{unique("u3")}); !errors.Is(err, docket.ErrUniqueRunExists) || ids[0] != "u1" {
		t.Fatalf("duplicate unique batch = %v, %v", ids, err)
	}
	_, err = client.FetchRun(ctx, docket.Tenant("a"), "r1")
	must("fetch", err)
	_, err = client.InspectRun(ctx, docket.Tenant("a"), "r1")
	must("inspect", err)
	page, err := client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenant("a"), Limit: 1})
	must("list", err)
	_, err = client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenant("a"), Limit: 1, After: page.Next})
	must("list after", err)
	domainPage, err := client.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Limit: 1})
	must("list domain", err)
	_, err = client.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Limit: 1, After: domainPage.Next})
	must("list domain after", err)
	_, err = client.ListRuns(ctx, docket.ListRunsRequest{Scope: docket.Tenant("a"), Phase: docket.PhaseQueued})
	must("list by phase", err)
	_, err = client.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Phase: docket.PhaseQueued})
	must("list domain by phase", err)
	_, err = client.ListTenants(ctx, docket.ListTenantsRequest{Limit: 10})
	must("list tenants", err)

	// The lifecycle: trace and claim, refresh, commit, release, abandon,
	// poison and its retry, cancel, retry of a finished run.
	res, err = client.ClaimDue(ctx, docket.ClaimRequest{Now: now, Limit: 4, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	must("claim", err)
	if len(res.Leases) != 4 {
		t.Fatalf("claim leased %d runs", len(res.Leases))
	}
	_, err = client.TraceClaimDue(ctx, docket.ClaimRequest{Now: now, Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
	must("trace claim", err)
	leases := res.Leases
	_, err = client.RefreshClaim(ctx, leases[0].Holder())
	must("refresh", err)
	_, err = client.Commit(ctx, docket.CommitRequest{Holder: leases[0].Holder(), ExpectedSeq: leases[0].CheckpointSeq, Step: 1,
		State: json.RawMessage(`{}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)})
	must("commit", err)
	if _, err := client.Commit(ctx, docket.CommitRequest{Holder: leases[0].Holder(), ExpectedSeq: leases[0].CheckpointSeq, Step: 2,
		State: json.RawMessage(`{}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)}); !errors.Is(err, docket.ErrStaleFence) {
		t.Fatalf("a second commit of a finished run = %v, want ErrStaleFence", err)
	}
	_, err = client.ReleaseClaim(ctx, leases[1].Holder())
	must("release", err)
	_, err = client.AbandonClaim(ctx, docket.AbandonRequest{Holder: leases[2].Holder(), ExpectedSeq: leases[2].CheckpointSeq, RetryAt: now})
	must("abandon", err)
	_, err = client.Cancel(ctx, leases[3].Scope, leases[3].RunID)
	must("cancel a claimed run", err)
	poison, err := client.ClaimDue(ctx, docket.ClaimRequest{Now: now.Add(time.Hour), Limit: 8, ClaimTTL: time.Minute, MaxClaimAttempts: 1})
	must("claim to poison", err)
	if len(poison.Poisoned) == 0 {
		t.Fatalf("no run was poisoned: %+v", poison)
	}
	_, err = client.RetryPoisonedRun(ctx, poison.Poisoned[0].Scope, poison.Poisoned[0].RunID)
	must("retry poisoned", err)
	_, err = client.RetryRun(ctx, leases[0].Scope, leases[0].RunID, docket.RetryRunOptions{Force: true})
	must("retry finished", err)

	// The claim policy.
	def, err := client.FetchClaimPolicyDefault(ctx)
	must("fetch default", err)
	_, err = client.PutClaimPolicyDefault(ctx, 3, docket.ClaimPolicyWriteOptions{ExpectedVersion: &def.Version})
	must("put default", err)
	_, err = client.PutClaimPolicyOverride(ctx, docket.Tenant("a"), 1, docket.ClaimPolicyWriteOptions{})
	must("put override", err)
	_, err = client.InspectClaimPolicy(ctx, docket.Tenant("a"))
	must("inspect policy", err)
	_, err = client.ResetClaimPolicyOverride(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{})
	must("reset override", err)
	_, err = client.PauseTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{})
	must("pause tenant", err)
	_, err = client.ResumeTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{})
	must("resume tenant", err)
	_, err = client.PutClaimPolicyRate(ctx, docket.RateLimit{Limit: 100, Period: time.Second}, docket.ClaimPolicyWriteOptions{})
	must("put default rate", err)
	_, err = client.PutTenantRate(ctx, docket.Tenant("a"), docket.RateLimit{Limit: 10, Period: time.Second, Burst: 2}, docket.ClaimPolicyWriteOptions{})
	must("put tenant rate", err)
	_, err = client.ResetTenantRate(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{})
	must("reset tenant rate", err)
	_, err = client.PauseDomain(ctx, docket.ClaimPolicyWriteOptions{})
	must("pause domain", err)
	_, err = client.ResumeDomain(ctx, docket.ClaimPolicyWriteOptions{})
	must("resume domain", err)
	_, err = client.PutClaimPolicyParking(ctx, false, docket.ClaimPolicyWriteOptions{})
	must("parking off", err)
	_, err = client.PutClaimPolicyParking(ctx, true, docket.ClaimPolicyWriteOptions{})
	must("parking on", err)

	// The console's reads.
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired, Schema: "docket"})
	must("admin", err)
	_, err = admin.DomainOverview(ctx)
	must("domain overview", err)
	scopeA := docket.Tenant("a")
	_, err = admin.CountRunPhases(ctx, docket.CountRunPhasesRequest{Scope: &scopeA, GraphID: "g"})
	must("count run phases of a scope", err)
	for _, sort := range []docket.TenantSort{docket.TenantSortScope, docket.TenantSortUnfinished, docket.TenantSortQueued, docket.TenantSortDebt} {
		_, err = admin.BrowseTenants(ctx, docket.BrowseTenantsRequest{Sort: sort, Limit: 10})
		must(fmt.Sprintf("browse tenants by %s", sort), err)
	}
	_, err = admin.InspectTenant(ctx, docket.Tenant("a"))
	must("inspect tenant", err)
	_, err = admin.RingWindow(ctx, docket.RingWindowRequest{Limit: 10})
	must("ring window", err)
	_, err = admin.SearchRuns(ctx, docket.SearchRunsRequest{Prefix: "r", Scope: &scopeA, Phase: docket.PhaseQueued})
	must("search runs", err)
	for _, scope := range []*docket.Scope{nil, &scopeA} {
		_, err = admin.ListQueuedRuns(ctx, docket.ListQueuedRunsRequest{Scope: scope, Limit: 1})
		must("list queued runs", err)
		_, err = admin.ListQueuedRuns(ctx, docket.ListQueuedRunsRequest{Scope: scope, Limit: 1, After: &docket.QueueCursor{WakeAt: now, RunID: "r1"}})
		must("list queued runs after", err)
	}

	// Schedules.
	_, err = client.AddSchedule(ctx, docket.NewSchedule{Scope: docket.Tenant("s"), Name: "every-minute", GraphID: "g", GraphHash: "h",
		State: json.RawMessage(`{}`), Every: time.Minute, Start: now.Add(-time.Hour)})
	must("add schedule", err)
	_, err = client.AddSchedule(ctx, docket.NewSchedule{Scope: docket.Tenant("s"), Name: "to-remove", GraphID: "g", GraphHash: "h",
		State: json.RawMessage(`{}`), Every: time.Hour})
	must("add schedule", err)
	_, err = client.FetchSchedule(ctx, docket.Tenant("s"), "every-minute")
	must("fetch schedule", err)
	_, err = client.ListSchedules(ctx, docket.ListSchedulesRequest{Limit: 10})
	must("list schedules", err)
	_, err = client.PauseSchedule(ctx, docket.Tenant("s"), "every-minute", docket.ScheduleWriteOptions{})
	must("pause schedule", err)
	_, err = client.ResumeSchedule(ctx, docket.Tenant("s"), "every-minute", docket.ScheduleWriteOptions{})
	must("resume schedule", err)
	must("remove schedule", client.RemoveSchedule(ctx, docket.Tenant("s"), "to-remove", docket.ScheduleWriteOptions{}))
	tx, err = pool.Begin(ctx)
	must("begin", err)
	ticks, err := client.TakeDueTicksTx(ctx, tx, now, 100)
	must("take due ticks", err)
	must("commit ticks", tx.Commit(ctx))
	if len(ticks) == 0 {
		t.Fatal("no schedule tick was due")
	}

	// dockettest's Work on one queued run.
	_, err = client.InsertRun(ctx, newRun("w", "work-1"))
	must("insert for Work", err)
	dockettest.Work(ctx, t, client, docket.Tenant("w"), "work-1", func(context.Context, *docket.Job) docket.Result {
		return docket.Complete(nil)
	})

	// dockettest's Work explaining why a run behind an older one in its
	// tenant's FIFO was not leased.
	_, err = client.InsertRuns(ctx, []docket.NewRun{newRun("f", "fifo-1"), newRun("f", "fifo-2")})
	must("insert a FIFO", err)
	refused := &fatalRecorder{}
	dockettest.Work(ctx, refused, client, docket.Tenant("f"), "fifo-2", func(context.Context, *docket.Job) docket.Result {
		return docket.Complete(nil)
	})
	if want := `run "fifo-2" is not at the head of its tenant's FIFO`; !strings.Contains(refused.message, want) {
		t.Fatalf("Work of a run behind an older one failed with %q, want it to say %q", refused.message, want)
	}

	// A Worker: listens, claims, commits in batches and in the handler's own
	// transaction, takes schedule ticks, sweeps the ring and retains.
	fairWorker(t, client, pool)

	_, err = client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{FinishedBefore: time.Now().Add(time.Hour)})
	must("delete finished runs", err)

	// Back to Legacy, which selects its admission mode again.
	testkit.OpenClient(t, pool, legacyCfg)
}

// fatalRecorder is a dockettest.TB that keeps the failure message.
type fatalRecorder struct{ message string }

// Helper implements dockettest.TB.
func (*fatalRecorder) Helper() {}

// Fatalf implements dockettest.TB.
func (r *fatalRecorder) Fatalf(format string, args ...any) { r.message = fmt.Sprintf(format, args...) }

// oneRunWorker drains one run, runID, with a Worker of client.
func oneRunWorker(t *testing.T, client *docket.Client, runID string) {
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		Handler: func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }})
	events.WaitFor(t, "the worker to listen", testkit.WorkerListening)
	if _, err := client.InsertRun(testkit.Context(t), docket.NewRun{RunID: runID, Scope: docket.Tenant("a"),
		GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	events.WaitWritten(t, "complete", runID)
	// The retention cleaner's first pass runs at start; a stop while its
	// statements run would cancel them, which this scenario counts as a
	// failed statement.
	events.WaitFor(t, "the first retention pass", testkit.WorkerRetentionPassed)
	testkit.StopWorker(t, w, runResult)
}

// fairWorker drains runs with a TenantFair Worker, one of whose handlers
// writes its verdict in its own transaction.
func fairWorker(t *testing.T, client *docket.Client, pool *pgxpool.Pool) {
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{Concurrency: 2, OnEvent: events.Hook, Schedules: true,
		Retention: docket.WorkerRetention{Every: time.Hour},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if job.RunID != "in-tx" {
				return docket.Complete(nil)
			}
			tx, err := pool.Begin(ctx)
			if err != nil {
				return docket.Fail(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			if err := job.CommitTx(ctx, tx, docket.Complete(nil)); err != nil {
				return docket.Fail(err)
			}
			if err := tx.Commit(ctx); err != nil {
				return docket.Fail(err)
			}
			return docket.Complete(nil)
		}})
	events.WaitFor(t, "the worker to listen", testkit.WorkerListening)
	ids := []string{"in-tx", "w-2", "w-3"}
	for _, id := range ids {
		if _, err := client.InsertRun(testkit.Context(t), docket.NewRun{RunID: id, Scope: docket.Tenant("x" + id),
			GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	events.WaitWritten(t, "complete", ids...)
	events.WaitFor(t, "the first retention pass", testkit.WorkerRetentionPassed)
	// A stop before the schedule taker's first pass ends would leave its
	// last statement, the read of the next tick, unsent.
	events.WaitFor(t, "the first schedule pass", testkit.WorkerSchedulePassed)
	testkit.StopWorker(t, w, runResult)
}
