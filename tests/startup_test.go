package tests

import (
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
)

// startupPolicy is the persisted singleton policy row; 0 and "" stand for
// NULL. Values compare with ==.
type startupPolicy struct {
	mode          string
	maxActive     int64
	configured    int64
	version       int64
	initializedAt string
	updatedAt     string
	rowVersion    string // xmin: changes with every write of the row
}

func startupReadPolicy(t testing.TB, pool *pgxpool.Pool) startupPolicy {
	t.Helper()
	var p startupPolicy
	err := pool.QueryRow(testContext(t), `select admission_mode, coalesce(max_active, 0), coalesce(configured_max_active, 0),
		policy_version, coalesce(initialized_at::text, ''), updated_at::text, xmin::text from docket_claim_policy`).
		Scan(&p.mode, &p.maxActive, &p.configured, &p.version, &p.initializedAt, &p.updatedAt, &p.rowVersion)
	if err != nil {
		t.Fatalf("read policy: %v", err)
	}
	return p
}

// startupExpectPolicy checks an initialized policy's caps, version and mode.
func startupExpectPolicy(t testing.TB, got startupPolicy, mode string, maxActive, configured, version int64) {
	t.Helper()
	if got.mode != mode || got.maxActive != maxActive || got.configured != configured ||
		got.version != version || got.initializedAt == "" {
		t.Fatalf("policy = %+v; want mode %s, default %d, configured %d, version %d, initialized",
			got, mode, maxActive, configured, version)
	}
}

// startupExpectMismatch opens with TenantFair and requires ErrSchemaMismatch
// with the policy row untouched; NewAdmin must refuse alike.
func startupExpectMismatch(t *testing.T, pool *pgxpool.Pool, policyExists bool) {
	t.Helper()
	var before startupPolicy
	if policyExists {
		before = startupReadPolicy(t, pool)
	}
	client, err := docket.Open(testContext(t), pool, tenantFairConfig(4))
	if !errors.Is(err, docket.ErrSchemaMismatch) || client != nil {
		t.Fatalf("Open = %v, %v; want ErrSchemaMismatch and no client", client, err)
	}
	if _, err := docket.NewAdmin(testContext(t), pool, docket.AdminConfig{}); !errors.Is(err, docket.ErrSchemaMismatch) {
		t.Fatalf("NewAdmin error = %v, want ErrSchemaMismatch", err)
	}
	if policyExists {
		if after := startupReadPolicy(t, pool); after != before {
			t.Fatalf("a refused start changed the policy: %+v -> %+v", before, after)
		}
	}
}

func TestStartupRejectsSchemaMismatch(t *testing.T) {
	t.Parallel()
	t.Run("empty database", func(t *testing.T) {
		t.Parallel()
		startupExpectMismatch(t, poolFor(t, pgtest.NewEmptyDatabase(t)), false)
	})
	t.Run("V1 only", func(t *testing.T) {
		t.Parallel()
		url := pgtest.NewEmptyDatabase(t)
		migrateOrFail(t, url, docket.MigrateOptions{Target: migV1Version})
		pool := poolFor(t, url)
		startupExpectMismatch(t, pool, false)
		if got := queryInt64(t, pool, `select count(*) from pg_class where relname like 'docket_claim_%'`); got != 0 {
			t.Fatalf("a refused start created %d claim relations", got)
		}
	})
	t.Run("extra claim function overload", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t)
		execSQL(t, pool, `create function docket_tenant_fair_claim(p_now timestamptz, p_demand integer)
			returns void language sql as ''`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("claim function with another argument list", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t)
		execSQL(t, pool, `drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean);
			create function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text)
			returns void language sql as ''`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("claim function missing", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t)
		execSQL(t, pool, `drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean)`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("marker column dropped", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t)
		execSQL(t, pool, `alter table docket_runs drop column tenant_admitted_at`)
		startupExpectMismatch(t, pool, true)
	})
	t.Run("policy row deleted", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t)
		execSQL(t, pool, `delete from docket_claim_policy`)
		startupExpectMismatch(t, pool, false)
		if got := queryInt64(t, pool, `select count(*) from docket_claim_policy`); got != 0 {
			t.Fatalf("a refused start recreated %d policy rows", got)
		}
	})
	t.Run("unknown later migration applied", func(t *testing.T) {
		t.Parallel()
		pool := newPool(t)
		execSQL(t, pool, `insert into docket_schema_migrations (version) values ('20991231000000')`)
		startupExpectMismatch(t, pool, true)
	})
}

func TestStartupTenantFairSynchronization(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := testContext(t)
	if p := startupReadPolicy(t, pool); p.mode != "legacy" || p.maxActive != 0 || p.configured != 0 || p.version != 0 || p.initializedAt != "" {
		t.Fatalf("fresh policy = %+v, want uninitialized legacy", p)
	}

	// First start initializes.
	client := openClient(t, pool, tenantFairConfig(4))
	first := startupReadPolicy(t, pool)
	startupExpectPolicy(t, first, "tenant_fair", 4, 4, 1)
	override, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("vip"), 9, docket.ClaimPolicyWriteOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Unchanged configuration writes nothing.
	openClient(t, pool, tenantFairConfig(4))
	if again := startupReadPolicy(t, pool); again != first {
		t.Fatalf("a restart with unchanged config wrote the policy: %+v -> %+v", first, again)
	}

	// A runtime default change survives restarts with unchanged config.
	if _, err := client.PutClaimPolicyDefault(ctx, 7, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	runtime := startupReadPolicy(t, pool)
	startupExpectPolicy(t, runtime, "tenant_fair", 7, 4, 2)
	openClient(t, pool, tenantFairConfig(4))
	if again := startupReadPolicy(t, pool); again != runtime {
		t.Fatalf("a restart overwrote the runtime default: %+v -> %+v", runtime, again)
	}

	// A changed configured cap overwrites the persisted default once.
	openClient(t, pool, tenantFairConfig(12))
	changed := startupReadPolicy(t, pool)
	startupExpectPolicy(t, changed, "tenant_fair", 12, 12, 3)
	if changed.initializedAt != first.initializedAt {
		t.Fatalf("initialized_at moved from %v to %v", first.initializedAt, changed.initializedAt)
	}
	openClient(t, pool, tenantFairConfig(12))
	if again := startupReadPolicy(t, pool); again != changed {
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
	openClient(t, pool, legacyConfig())
	legacy := startupReadPolicy(t, pool)
	if legacy.mode != "legacy" || legacy.maxActive != 12 || legacy.version != 3 {
		t.Fatalf("after a Legacy start: %+v, want legacy with default 12 at version 3", legacy)
	}
	openClient(t, pool, tenantFairConfig(12))
	startupExpectPolicy(t, startupReadPolicy(t, pool), "tenant_fair", 12, 12, 3)
}

func TestStartupLegacyToTenantFairMarksLiveClaims(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	openClient(t, pool, legacyConfig())
	migInsertRuns(t, pool,
		migRun{"h1", "heavy", "claimed"},
		migRun{"h2", "heavy", "claimed"},
		migRun{"h3", "heavy", "claimed"},
		migRun{"h4", "heavy", "ready"},
		migRun{"h5", "heavy", "poisoned"},
		migRun{"h6", "heavy", "waiting"},
		migRun{"l1", "light", "claimed"},
		migRun{"l2", "light", "future"},
	)
	if got := queryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at is not null`); got != 0 {
		t.Fatalf("setup: %d marked runs under Legacy", got)
	}

	client := openClient(t, pool, tenantFairConfig(2))
	if got := queryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at = claimed_at`); got != 4 {
		t.Fatalf("claims adopted as admissions = %d, want 4", got)
	}
	if got := queryInt64(t, pool, `select count(*) from docket_runs
		where tenant_admitted_at is not null and run_id not in ('h1', 'h2', 'h3', 'l1')`); got != 0 {
		t.Fatalf("%d unclaimed runs got a marker", got)
	}
	heavy, err := client.InspectClaimPolicy(testContext(t), docket.Tenant("heavy"))
	if err != nil {
		t.Fatal(err)
	}
	if heavy.Admitted != 3 || heavy.AdmittedClaimed != 3 || heavy.Debt != 1 || heavy.Queued != 1 {
		t.Fatalf("heavy after the switch: %+v, want 3 admitted claimed, debt 1, 1 queued", heavy)
	}
}

func TestStartupConcurrentOpensConverge(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	startupOpenConcurrently(t, pool, 4, 5)
	startupExpectPolicy(t, startupReadPolicy(t, pool), "tenant_fair", 5, 5, 1)
	startupOpenConcurrently(t, pool, 4, 6)
	startupExpectPolicy(t, startupReadPolicy(t, pool), "tenant_fair", 6, 6, 2)
}

// startupOpenConcurrently opens n clients of one configuration at once, each
// on its own pool, and fails unless all of them start.
func startupOpenConcurrently(t *testing.T, pool *pgxpool.Pool, n, defaultCap int) {
	t.Helper()
	pools := make([]*pgxpool.Pool, n)
	for i := range pools {
		pools[i] = poolFor(t, pool.Config().ConnString())
	}
	start := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for _, p := range pools {
		wg.Go(func() {
			<-start
			_, err := docket.Open(testContext(t), p, tenantFairConfig(defaultCap))
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
