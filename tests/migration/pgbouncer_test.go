package migration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgbouncer"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestPgBouncerTransactionPooling(t *testing.T) {
	t.Parallel()
	upstream := pgtest.NewDatabase(t)
	direct := testkit.PoolFor(t, upstream)
	b := testkit.StartBouncer(t, upstream, 2)
	pool := testkit.BouncerPool(t, b, 8)
	ctx := testkit.Context(t)

	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired})
	if err != nil {
		t.Fatalf("NewAdmin through PgBouncer: %v", err)
	}
	ids := bouncerInsert(t, client, 6, 6)

	// Admin work through the bouncer, compare-and-set included.
	def, err := admin.FetchClaimPolicyDefault(ctx)
	if err == nil {
		_, err = admin.PutClaimPolicyDefault(ctx, 3, docket.ClaimPolicyWriteOptions{ExpectedVersion: &def.Version})
	}
	if err == nil {
		_, err = admin.PutClaimPolicyOverride(ctx, docket.Tenant("t0"), 1, docket.ClaimPolicyWriteOptions{})
	}
	if err == nil {
		_, err = admin.ResetClaimPolicyOverride(ctx, docket.Tenant("t0"), docket.ClaimPolicyWriteOptions{})
	}
	if err == nil {
		_, err = admin.InspectClaimPolicy(ctx, docket.Tenant("t1"))
	}
	if err != nil {
		t.Fatalf("admin through PgBouncer: %v", err)
	}

	bouncerLifecycle(t, client, pool)
	testkit.ExpectRingExact(t, direct)

	// Eight claimers share two server connections and drain everything.
	commits := bouncerDrain(t, client, len(ids))
	for _, id := range ids {
		if commits[id] != 1 {
			t.Errorf("run %s committed done %d times, want 1", id, commits[id])
		}
	}
	if got := testkit.QueryInt64(t, direct, `select count(*) from docket_runs where status = 'done'`); got != int64(len(ids)) {
		t.Fatalf("%d runs done, want %d", got, len(ids))
	}
	if got := testkit.QueryInt64(t, direct, `select count(*) from docket_runs where claim_token is not null or tenant_admitted_at is not null`); got != 0 {
		t.Fatalf("%d runs keep a claim or marker after the drain", got)
	}
	testkit.ExpectRingExact(t, direct)

	// A worker behind the bouncer: its LISTEN session cannot follow a
	// transaction pooler, so it finds work by polling.
	more := bouncerInsert(t, client, 3, 5)
	counter := testkit.NewWorkerCounter()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 4, PollInterval: 50 * time.Millisecond, ClaimTTL: 5 * time.Second, Logger: slog.New(slog.DiscardHandler),
		OnEvent: events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			counter.Add(job.RunID)
			return docket.Complete(json.RawMessage(`{"worker":true}`))
		},
	})
	events.WaitWritten(t, "complete", more...)
	testkit.StopWorker(t, w, runResult)
	counter.ExpectEach(t, more, 1)
	testkit.ExpectRingExact(t, direct)
	t.Logf("through PgBouncer (transaction pooling, 2 server connections): %d runs claimed and committed once each by 8 claimers, %d by a worker; lifecycle and admin work passed",
		len(ids), len(more))
}

// bouncerInsert inserts perTenant runs for each of tenants tenants from
// one goroutine per tenant and returns their ids.
func bouncerInsert(t *testing.T, client *docket.Client, tenants, perTenant int) []string {
	t.Helper()
	base := testkit.QueryInt64(t, client.Pool(), `select count(*) from docket_runs`)
	var wg sync.WaitGroup
	errs := make(chan error, tenants)
	ids := make([][]string, tenants)
	for i := range tenants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range perTenant {
				run := appRun(fmt.Sprintf("t%d", i), fmt.Sprintf("b%d-t%d-%d", base, i, j))
				if _, err := client.InsertRun(testkit.Context(t), run); err != nil {
					errs <- err
					return
				}
				ids[i] = append(ids[i], run.RunID)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("insert through PgBouncer: %v", err)
	}
	var all []string
	for _, tenantIDs := range ids {
		all = append(all, tenantIDs...)
	}
	return all
}

// bouncerLifecycle runs every holder write, a rolled-back ClaimDueTx and
// the unclaimed transitions through the bouncer, and leaves every run due
// and unclaimed again.
func bouncerLifecycle(t *testing.T, client *docket.Client, pool *pgxpool.Pool) {
	t.Helper()
	ctx := testkit.Context(t)
	claim := func(limit int) []docket.Lease {
		t.Helper()
		tr, err := client.TraceClaimDue(ctx, docket.ClaimRequest{Now: time.Now(), Limit: limit, ClaimTTL: time.Hour, MaxClaimAttempts: 10})
		if err != nil || len(tr.Result.Leases) != limit {
			t.Fatalf("claim %d through PgBouncer: %d leases, %v", limit, len(tr.Result.Leases), err)
		}
		return tr.Result.Leases
	}
	leases := claim(3)
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s through PgBouncer: %v", what, err)
		}
	}
	_, err := client.RefreshClaim(ctx, leases[0].Holder())
	check("RefreshClaim", err)
	run, err := client.Commit(ctx, docket.CommitRequest{Holder: leases[0].Holder(), ExpectedSeq: leases[0].CheckpointSeq,
		Step: 1, State: json.RawMessage(`{"step":1}`), Disposition: docket.RetainClaim()})
	check("Commit RetainClaim", err)
	_, err = client.Commit(ctx, docket.CommitRequest{Holder: leases[0].Holder(), ExpectedSeq: run.CheckpointSeq,
		Step: 2, Disposition: docket.ReleaseImmediate()})
	check("Commit ReleaseImmediate", err)
	_, err = client.Commit(ctx, docket.CommitRequest{Holder: leases[0].Holder(), ExpectedSeq: run.CheckpointSeq + 1, Step: 3,
		Disposition: docket.ReleaseImmediate()})
	if !errors.Is(err, docket.ErrStaleFence) {
		t.Fatalf("stale commit through PgBouncer: %v, want ErrStaleFence", err)
	}
	_, err = client.ReleaseClaim(ctx, leases[1].Holder())
	check("ReleaseClaim", err)
	res, err := client.AbandonClaim(ctx, docket.AbandonRequest{Holder: leases[2].Holder(), ExpectedSeq: leases[2].CheckpointSeq,
		MaxAbandons: 1})
	check("AbandonClaim", err)
	if res.Outcome != docket.AbandonPoisoned {
		t.Fatalf("abandon outcome %q, want poisoned", res.Outcome)
	}
	_, err = client.RetryPoisonedRun(ctx, leases[2].Scope, leases[2].RunID)
	check("RetryPoisonedRun", err)
	for _, status := range []docket.RunStatus{docket.StatusWaiting, docket.StatusRunning} {
		_, err = client.MutateRun(ctx, leases[1].Scope, leases[1].RunID, func(docket.Run) (docket.Mutation, error) {
			return docket.Mutation{Status: status}, nil
		})
		check("MutateRun to "+string(status), err)
	}
	// A claim inside a rolled-back transaction leaves nothing behind.
	before := testkit.Snap(t, pool)
	rolledBack := errors.New("roll back")
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		res, err := client.ClaimDueTx(ctx, tx, docket.ClaimRequest{Now: time.Now(), Limit: 4, ClaimTTL: time.Hour, MaxClaimAttempts: 10})
		if err == nil && res.Outcomes() != 4 {
			err = fmt.Errorf("%d outcomes, want 4", res.Outcomes())
		}
		if err != nil {
			return err
		}
		return rolledBack
	})
	if !errors.Is(err, rolledBack) {
		t.Fatalf("ClaimDueTx through PgBouncer: %v", err)
	}
	testkit.ExpectUnchanged(t, "a rolled-back ClaimDueTx through PgBouncer", before, testkit.Snap(t, pool))
	for _, l := range leases {
		if _, err := client.FetchRun(ctx, l.Scope, l.RunID); err != nil {
			t.Fatalf("FetchRun through PgBouncer: %v", err)
		}
		if _, err := client.InspectRun(ctx, l.Scope, l.RunID); err != nil {
			t.Fatalf("InspectRun through PgBouncer: %v", err)
		}
	}
	if _, err := client.ListRuns(ctx, docket.ListRunsRequest{Scope: leases[0].Scope}); err != nil {
		t.Fatalf("ListRuns through PgBouncer: %v", err)
	}
}

// bouncerDrain lets eight goroutines claim and finish runs until total
// runs are done, and returns how many done commits each run got. Lock
// contention on the policy row is an expected refusal and is retried; a
// call that leases nothing waits for another goroutine's commit.
func bouncerDrain(t *testing.T, client *docket.Client, total int) map[string]int {
	t.Helper()
	var mu sync.Mutex
	commits := map[string]int{}
	var done, contention atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	progress := testkit.NewClaimProgress()
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := testkit.Context(t)
			for {
				committed := progress.Next()
				if done.Load() >= int64(total) {
					return
				}
				res, err := client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now(), Limit: 2, ClaimTTL: time.Hour, MaxClaimAttempts: 100})
				if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok && unavailable.Reason == "lock_contention" {
					contention.Add(1)
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("claimer %d: %w", g, err)
					return
				}
				for _, l := range res.Leases {
					_, err := client.Commit(ctx, docket.CommitRequest{Holder: l.Holder(), ExpectedSeq: l.CheckpointSeq, Step: 9,
						State: json.RawMessage(fmt.Sprintf(`{"claimer":%d}`, g)), Disposition: docket.ReleaseTerminal(docket.StatusDone)})
					if err != nil {
						errs <- fmt.Errorf("claimer %d commit %s: %w", g, l.RunID, err)
						return
					}
					mu.Lock()
					commits[l.RunID]++
					mu.Unlock()
					done.Add(1)
					progress.Mark()
				}
				if res.Outcomes() == 0 {
					if err := progress.Wait(ctx, committed); err != nil {
						errs <- fmt.Errorf("claimer %d found nothing: %w", g, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("drain through PgBouncer: %v", err)
	}
	t.Logf("drain through PgBouncer: %d policy lock timeouts retried", contention.Load())
	return commits
}

func TestPgBouncerDefaultStatementCacheBreaks(t *testing.T) {
	t.Parallel()
	upstream := pgtest.NewDatabase(t)
	version, err := pgbouncer.InstalledVersion(testkit.Context(t))
	if err != nil {
		t.Fatalf("PgBouncer is required by this test (Debian package pgbouncer): %v", err)
	}
	b := testkit.StartBouncer(t, upstream, 1)
	// Two clients, one server connection: pgx's default mode prepares a
	// named statement per connection, and the second client's Parse meets
	// the statement the first one left on the shared server connection.
	var errs []error
	for range 2 {
		conn, err := pgx.Connect(testkit.Context(t), b.URL())
		if err != nil {
			t.Fatalf("connect through PgBouncer: %v", err)
		}
		defer conn.Close(context.Background())
		var v int
		errs = append(errs, conn.QueryRow(testkit.Context(t), `select $1::int + 1`, 41).Scan(&v))
	}
	if errs[0] != nil {
		t.Fatalf("first client: %v", errs[0])
	}
	if version.TracksPreparedStatements() {
		t.Logf("PgBouncer %s can track prepared statements (max_prepared_statements); second client: %v", version, errs[1])
		return
	}
	if got := testkit.GuardSQLState(errs[1]); got != "42P05" {
		t.Fatalf("second client with the default statement cache through PgBouncer %s: %v, want SQLSTATE 42P05 (prepared statement already exists)", version, errs[1])
	}
	t.Logf("PgBouncer %s without prepared statement tracking: the default statement cache fails (%v); docs/operations.md prescribes QueryExecModeCacheDescribe", version, errs[1])
}

// urlAs returns databaseURL logging in as user with password.
func urlAs(t testing.TB, databaseURL, user, password string) string {
	t.Helper()
	if u, err := url.Parse(databaseURL); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.User = url.UserPassword(user, password)
		return u.String()
	}
	return databaseURL + " user='" + user + "' password='" + password + "'"
}

func TestPgBouncerSchemaFromRoleSettings(t *testing.T) {
	t.Parallel()
	const schema = "hard_bouncer_domain"
	databaseURL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Schema: schema})
	owner := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, schema))
	role, password := testkit.CreateRole(t, owner)
	dbname := owner.Config().ConnConfig.Database
	testkit.ApplyGrants(t, owner, testkit.GrantsScript(t), schema, role, dbname)
	// PgBouncer refuses a search_path startup parameter; the schema comes
	// from the role's setting in this database instead.
	testkit.ExecSQL(t, owner, "alter role "+pgx.Identifier{role}.Sanitize()+" in database "+pgx.Identifier{dbname}.Sanitize()+
		" set search_path = "+pgx.Identifier{schema}.Sanitize())
	b := testkit.StartBouncer(t, urlAs(t, databaseURL, role, password), 2)

	cfg := testkit.PoolConfig(t, b.URL(), 2)
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	refused := testkit.Pool(t, cfg)
	if err := refused.Ping(testkit.Context(t)); testkit.GuardSQLState(err) != "08P01" {
		t.Fatalf("search_path as a startup parameter through PgBouncer: %v, want SQLSTATE 08P01 (unsupported startup parameter)", err)
	}

	pool := testkit.BouncerPool(t, b, 4)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	if _, err := client.InsertRun(testkit.Context(t), appRun("acme", "through-role-settings")); err != nil {
		t.Fatalf("insert through PgBouncer as %s: %v", role, err)
	}
	res, err := client.ClaimDue(testkit.Context(t), docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 3})
	if err != nil || len(res.Leases) != 1 {
		t.Fatalf("claim through PgBouncer as %s: %+v, %v", role, res, err)
	}
	if got := testkit.QueryInt64(t, owner, `select count(*) from docket_runs where claim_token is not null`); got != 1 {
		t.Fatalf("%d claimed runs in schema %s, want 1", got, schema)
	}
}
