package migration

import (
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// startupExpectPolicy checks an initialized policy's caps, version and mode.
func startupExpectPolicy(t testing.TB, got testkit.StartupPolicy, mode string, maxActive, configured, version int64) {
	t.Helper()
	if got.Mode != mode || got.MaxActive != maxActive || got.Configured != configured ||
		got.Version != version || got.InitializedAt == "" {
		t.Fatalf("policy = %+v; want mode %s, default %d, configured %d, version %d, initialized",
			got, mode, maxActive, configured, version)
	}
}

// startupExpectMismatch opens with TenantFair and requires ErrSchemaMismatch
// with the policy row untouched; NewAdmin must refuse alike.
func startupExpectMismatch(t *testing.T, pool *pgxpool.Pool, policyExists bool) {
	t.Helper()
	var before testkit.StartupPolicy
	if policyExists {
		before = testkit.StartupReadPolicy(t, pool)
	}
	client, err := docket.Open(testkit.Context(t), pool, testkit.TenantFairConfig(4))
	if !errors.Is(err, docket.ErrSchemaMismatch) || client != nil {
		t.Fatalf("Open = %v, %v; want ErrSchemaMismatch and no client", client, err)
	}
	if _, err := docket.NewAdmin(testkit.Context(t), pool, docket.AdminConfig{}); !errors.Is(err, docket.ErrSchemaMismatch) {
		t.Fatalf("NewAdmin error = %v, want ErrSchemaMismatch", err)
	}
	if policyExists {
		if after := testkit.StartupReadPolicy(t, pool); after != before {
			t.Fatalf("a refused start changed the policy: %+v -> %+v", before, after)
		}
	}
}

func TestStartupRejectsSchemaMismatch(t *testing.T) {
	t.Parallel()
	t.Run("empty database", func(t *testing.T) {
		t.Parallel()
		startupExpectMismatch(t, testkit.PoolFor(t, pgtest.NewEmptyDatabase(t)), false)
	})
	t.Run("V1 only", func(t *testing.T) {
		t.Parallel()
		url := pgtest.NewEmptyDatabase(t)
		testkit.MigrateOrFail(t, url, testkit.MigrateCall{Target: testkit.MigrationV1Version})
		pool := testkit.PoolFor(t, url)
		startupExpectMismatch(t, pool, false)
		if got := testkit.QueryInt64(t, pool, `select count(*) from pg_class where relname like 'docket_claim_%'`); got != 0 {
			t.Fatalf("a refused start created %d claim relations", got)
		}
	})
	t.Run("extra claim function overload", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.ExecSQL(t, pool, `create function docket_tenant_fair_claim(p_now timestamptz, p_demand integer)
			returns void language sql as ''`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("claim function with another argument list", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.ExecSQL(t, pool, `drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean);
			create function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text)
			returns void language sql as ''`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("claim function missing", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.ExecSQL(t, pool, `drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean)`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("marker column dropped", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.ExecSQL(t, pool, `alter table docket_runs drop column tenant_admitted_at`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("policy row deleted", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.ExecSQL(t, pool, `delete from docket_claim_policy`)
		startupExpectMismatch(t, pool, false)
		if got := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_policy`); got != 0 {
			t.Fatalf("a refused start recreated %d policy rows", got)
		}
	})
	t.Run("unknown later migration applied", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.ExecSQL(t, pool, `insert into docket_schema_migrations (version) values ('20991231000000')`)
		startupExpectMismatch(t, pool, true)
	})
}

func TestStartupTenantFairSynchronization(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	if p := testkit.StartupReadPolicy(t, pool); p.Mode != "legacy" || p.MaxActive != 0 || p.Configured != 0 || p.Version != 0 || p.InitializedAt != "" {
		t.Fatalf("fresh policy = %+v, want uninitialized legacy", p)
	}

	// First start initializes.
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	first := testkit.StartupReadPolicy(t, pool)
	startupExpectPolicy(t, first, "tenant_fair", 4, 4, 1)
	override, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("vip"), 9, docket.ClaimPolicyWriteOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Unchanged configuration writes nothing.
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	if again := testkit.StartupReadPolicy(t, pool); again != first {
		t.Fatalf("a restart with unchanged config wrote the policy: %+v -> %+v", first, again)
	}

	// A runtime default change survives restarts with unchanged config.
	if _, err := client.PutClaimPolicyDefault(ctx, 7, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	runtime := testkit.StartupReadPolicy(t, pool)
	startupExpectPolicy(t, runtime, "tenant_fair", 7, 4, 2)
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	if again := testkit.StartupReadPolicy(t, pool); again != runtime {
		t.Fatalf("a restart overwrote the runtime default: %+v -> %+v", runtime, again)
	}

	// A changed configured cap overwrites the persisted default once.
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(12))
	changed := testkit.StartupReadPolicy(t, pool)
	startupExpectPolicy(t, changed, "tenant_fair", 12, 12, 3)
	if changed.InitializedAt != first.InitializedAt {
		t.Fatalf("initialized_at moved from %v to %v", first.InitializedAt, changed.InitializedAt)
	}
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(12))
	if again := testkit.StartupReadPolicy(t, pool); again != changed {
		t.Fatalf("a second start with the new config wrote again: %+v -> %+v", changed, again)
	}

	// Overrides are never synchronized.
	var overrideCap, overrideVersion int64
	if err := pool.QueryRow(ctx, `select max_active, partition_version from docket_claim_partitions where scope_key = 'vip'`).
		Scan(&overrideCap, &overrideVersion); err != nil {
		t.Fatal(err)
	}
	if overrideCap != 9 || overrideVersion != override.Version {
		t.Fatalf("override after restarts = cap %d version %d, want 9 and %d", overrideCap, overrideVersion, override.Version)
	}

	// Legacy takes the engine back and leaves the default alone; TenantFair
	// with the same cap then only switches the mode.
	testkit.OpenClient(t, pool, testkit.LegacyConfig())
	legacy := testkit.StartupReadPolicy(t, pool)
	if legacy.Mode != "legacy" || legacy.MaxActive != 12 || legacy.Version != 3 {
		t.Fatalf("after a Legacy start: %+v, want legacy with default 12 at version 3", legacy)
	}
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(12))
	startupExpectPolicy(t, testkit.StartupReadPolicy(t, pool), "tenant_fair", 12, 12, 3)
}

func TestStartupLegacyToTenantFairMarksLiveClaims(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, testkit.LegacyConfig())
	testkit.MigrationInsertRuns(t, pool,
		testkit.MigrationRun{RunID: "h1", Tenant: "heavy", Shape: "claimed"},
		testkit.MigrationRun{RunID: "h2", Tenant: "heavy", Shape: "claimed"},
		testkit.MigrationRun{RunID: "h3", Tenant: "heavy", Shape: "claimed"},
		testkit.MigrationRun{RunID: "h4", Tenant: "heavy", Shape: "ready"},
		testkit.MigrationRun{RunID: "h5", Tenant: "heavy", Shape: "poisoned"},
		testkit.MigrationRun{RunID: "h6", Tenant: "heavy", Shape: "waiting"},
		testkit.MigrationRun{RunID: "l1", Tenant: "light", Shape: "claimed"},
		testkit.MigrationRun{RunID: "l2", Tenant: "light", Shape: "future"},
	)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at is not null`); got != 0 {
		t.Fatalf("setup: %d marked runs under Legacy", got)
	}

	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at = claimed_at`); got != 4 {
		t.Fatalf("claims adopted as admissions = %d, want 4", got)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs
		where tenant_admitted_at is not null and run_id not in ('h1', 'h2', 'h3', 'l1')`); got != 0 {
		t.Fatalf("%d unclaimed runs got a marker", got)
	}
	heavy, err := client.InspectClaimPolicy(testkit.Context(t), docket.Tenant("heavy"))
	if err != nil {
		t.Fatal(err)
	}
	if heavy.Admitted != 3 || heavy.AdmittedClaimed != 3 || heavy.Debt != 1 || heavy.Queued != 1 {
		t.Fatalf("heavy after the switch: %+v, want 3 admitted claimed, debt 1, 1 queued", heavy)
	}
}

func TestStartupConcurrentOpensConverge(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	startupOpenConcurrently(t, pool, 4, 5)
	startupExpectPolicy(t, testkit.StartupReadPolicy(t, pool), "tenant_fair", 5, 5, 1)
	startupOpenConcurrently(t, pool, 4, 6)
	startupExpectPolicy(t, testkit.StartupReadPolicy(t, pool), "tenant_fair", 6, 6, 2)
}

// startupOpenConcurrently opens n clients of one configuration at once, each
// on its own pool, and fails unless all of them start.
func startupOpenConcurrently(t *testing.T, pool *pgxpool.Pool, n, defaultCap int) {
	t.Helper()
	pools := make([]*pgxpool.Pool, n)
	for i := range pools {
		pools[i] = testkit.PoolFor(t, pool.Config().ConnString())
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for _, p := range pools {
		wg.Go(func() {
			<-start
			_, err := docket.Open(testkit.Context(t), p, testkit.TenantFairConfig(defaultCap))
			errs <- err
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open: %v", err)
		}
	}
}
