package migration

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// v2Objects are catalog entry prefixes of objects only V2 creates: each is
// absent at V1 and present at V2.
var v2Objects = []string{
	"relation docket_claim_policy kind=r",
	"relation docket_claim_partitions kind=r",
	"relation docket_claim_schedule kind=r",
	"relation docket_claim_schedule_ring_idx kind=i",
	"column docket_runs.tenant_admitted_at timestamp with time zone",
	"function docket_tenant_fair_claim(p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean)",
	"trigger docket_runs.docket_runs_track_insert_trg ",
	// Parked partitions.
	"column docket_claim_schedule.parked_until timestamp with time zone notnull=false",
	"column docket_claim_policy.park_dormant boolean notnull=true",
	"column docket_claim_policy.configured_park_dormant boolean notnull=true",
	"relation docket_claim_schedule_awake_idx kind=i",
	"relation docket_claim_schedule_wake_idx kind=i",
	"relation docket_runs_unadmitted_claimed_idx kind=i",
	"function docket_runs_wake_partition() returns trigger",
	"trigger docket_runs.docket_runs_wake_partition_trg ",
	// Attempts and the error history.
	"column docket_runs.attempt integer notnull=true generated= identity= default=0",
	"column docket_runs.errors jsonb notnull=true generated= identity= default='[]'::jsonb",
	"constraint docket_runs.docket_runs_attempt_check ",
	"constraint docket_runs.docket_runs_errors_array_check ",
	"constraint docket_runs.docket_runs_errors_bound_check ",
	"constraint docket_runs.docket_runs_errors_entry_check ",
	// Periodic runs.
	"relation docket_schedules kind=r",
	"relation docket_schedules_due_idx kind=i",
	"constraint docket_schedules.docket_schedules_cadence_check CHECK",
	"constraint docket_schedules.docket_schedules_scope_name_key UNIQUE (scope_key, name)",
	// Trace context.
	"column docket_runs.trace_context jsonb notnull=false",
	"constraint docket_runs.docket_runs_trace_context_check ",
	// The claim precheck, the run phase, retention.
	"relation docket_claim_pending kind=c",
	"function docket_claim_precheck(p_engine text, p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean, OUT o_error_reason text, OUT o_restore_lock_timeout text) returns record",
	"function docket_run_phase(r docket_runs, observed_at timestamp with time zone) returns text",
	"relation docket_runs_finished_idx kind=i",
	"index docket_runs_finished_idx CREATE INDEX docket_runs_finished_idx ON SCHEMA.docket_runs USING btree (finished_at, id) WHERE ",
	// Combined claims.
	"relation docket_claim_outcome kind=c",
	"relation docket_claim_deliveries kind=r",
	"relation docket_claim_tickets kind=S",
	"relation docket_claim_tickets_read kind=S",
}

// v3Objects are catalog entry prefixes of objects only V3 creates: absent
// at V2, present at V3.
var v3Objects = []string{
	"constraint docket_runs.docket_runs_run_id_check ",
	"constraint docket_runs.docket_runs_graph_id_check ",
	"constraint docket_runs.docket_runs_graph_hash_check ",
	"column docket_claim_policy.tenant_required boolean notnull=true",
	"function docket_runs_require_tenant() returns trigger",
	"trigger docket_runs.docket_runs_require_tenant_trg ",
	// Unique runs.
	"column docket_runs.unique_key text notnull=false",
	"column docket_runs.unique_bucket timestamp with time zone notnull=false",
	"column docket_runs.unique_statuses text[] notnull=false",
	"constraint docket_runs.docket_runs_unique_key_check ",
	"constraint docket_runs.docket_runs_unique_check ",
	"relation docket_runs_unique_idx kind=i",
	"function docket_unique_bucket(at timestamp with time zone, period_us bigint) returns timestamp with time zone",
	"function docket_runs_release_unique() returns trigger",
	"trigger docket_runs.docket_runs_release_unique_trg ",
	"column docket_runs.max_attempts integer notnull=false",
	"constraint docket_runs.docket_runs_max_attempts_check ",
}

// neverInV2 are catalog entry prefixes of objects the pre-release history
// created and removed again before release 0.1.0 squashed it: neither V1
// nor V2 has them.
var neverInV2 = []string{
	"relation docket_runs_admitted_idx kind=i",
	"function docket_run_marked(r docket_runs) returns boolean",
	"relation docket_claim_requests kind=r",
}

// hasPrefix reports whether any catalog entry starts with prefix.
func hasPrefix(objects []string, prefix string) bool {
	return slices.ContainsFunc(objects, func(o string) bool { return strings.HasPrefix(o, prefix) })
}

// A fresh install applies every version; an upgrade of a stopped V1
// database reaches exactly the fresh install's catalog; each down restores
// exactly the catalog of the version below it, and up again the newest.
func TestMigrationFreshInstallDownToV1AndUpAgain(t *testing.T) {
	t.Parallel()
	if got := testkit.MigrationAllVersions[:2]; !slices.Equal(got, []string{testkit.MigrationV1Version, testkit.MigrationV2Version}) {
		t.Fatalf("embedded migrations start %v, want V1 and V2 (release 0.1.0)", got)
	}
	v1URL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, v1URL, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	testkit.MigrationExpectApplied(t, v1URL, testkit.MigrateCall{}, testkit.MigrationV1Version)
	v1Pool := testkit.PoolFor(t, v1URL)
	v1 := testkit.MigrationCatalog(t, v1Pool, "public")
	for _, o := range slices.Concat(v2Objects, v3Objects, neverInV2) {
		if hasPrefix(v1, o) {
			t.Fatalf("V1 already has %s", o)
		}
	}

	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	pool := testkit.PoolFor(t, url)
	newest := testkit.MigrationCatalog(t, pool, "public")
	for _, o := range v2Objects {
		if !hasPrefix(newest, o) {
			t.Fatalf("a fresh install lacks %s", o)
		}
	}
	for _, o := range neverInV2 {
		if hasPrefix(newest, o) {
			t.Fatalf("a fresh install has %s, which no release ships", o)
		}
	}
	if got := testkit.QueryInt64(t, pool, "select count(*) from docket_claim_policy where admission_mode = 'legacy' and max_active is null and policy_version = 0"); got != 1 {
		t.Fatalf("fresh policy rows in their initial shape = %d, want 1", got)
	}

	testkit.MigrateOrFail(t, v1URL, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, v1URL, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	testkit.MigrationExpectSameCatalog(t, "V1 upgraded to the newest", testkit.MigrationCatalog(t, v1Pool, "public"), newest)

	// Each down restores exactly the catalog of a fresh install of the
	// version below it; up again restores the newest.
	catalogs := map[string][]string{testkit.MigrationV1Version: v1}
	for i := 1; i < len(testkit.MigrationAllVersions)-1; i++ {
		below := pgtest.NewEmptyDatabase(t)
		testkit.MigrateOrFail(t, below, testkit.MigrateCall{Target: testkit.MigrationAllVersions[i]})
		catalogs[testkit.MigrationAllVersions[i]] = testkit.MigrationCatalog(t, testkit.PoolFor(t, below), "public")
	}
	for _, o := range v3Objects {
		if hasPrefix(catalogs[testkit.MigrationV2Version], o) || !hasPrefix(newest, o) {
			t.Fatalf("%s is not an object only V3 creates", o)
		}
	}
	for i := len(testkit.MigrationAllVersions) - 1; i >= 1; i-- {
		testkit.MigrateOrFail(t, url, testkit.MigrateCall{Direction: docket.MigrateDown})
		testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions[:i]...)
		testkit.MigrationExpectSameCatalog(t, "after down to "+testkit.MigrationAllVersions[i-1], testkit.MigrationCatalog(t, pool, "public"), catalogs[testkit.MigrationAllVersions[i-1]])
	}
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	testkit.MigrationExpectSameCatalog(t, "after up again", testkit.MigrationCatalog(t, pool, "public"), newest)
}

func TestMigrationPopulatedUpgradeBackfillsClaimsOnly(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	pool := testkit.PoolFor(t, url)
	// First-run order decides ring positions: beta, then alpha, then the
	// tenantless scope, then gamma (which only has terminal runs).
	testkit.MigrationInsertRuns(t, pool,
		testkit.MigrationRun{RunID: "b-claimed", Tenant: "beta", Shape: "claimed"},
		testkit.MigrationRun{RunID: "a-claimed-1", Tenant: "alpha", Shape: "claimed"},
		testkit.MigrationRun{RunID: "a-claimed-2", Tenant: "alpha", Shape: "claimed"},
		testkit.MigrationRun{RunID: "a-claimed-3", Tenant: "alpha", Shape: "claimed"},
		testkit.MigrationRun{RunID: "a-ready-1", Tenant: "alpha", Shape: "ready"},
		testkit.MigrationRun{RunID: "a-ready-2", Tenant: "alpha", Shape: "ready"},
		testkit.MigrationRun{RunID: "a-waiting", Tenant: "alpha", Shape: "waiting"},
		testkit.MigrationRun{RunID: "a-poisoned", Tenant: "alpha", Shape: "poisoned"},
		testkit.MigrationRun{RunID: "a-done", Tenant: "alpha", Shape: "done"},
		testkit.MigrationRun{RunID: "b-future", Tenant: "beta", Shape: "future"},
		testkit.MigrationRun{RunID: "b-failed", Tenant: "beta", Shape: "failed"},
		testkit.MigrationRun{RunID: "n-claimed", Tenant: "", Shape: "claimed"},
		testkit.MigrationRun{RunID: "n-ready", Tenant: "", Shape: "ready"},
		testkit.MigrationRun{RunID: "g-done", Tenant: "gamma", Shape: "done"},
		testkit.MigrationRun{RunID: "g-cancelled", Tenant: "gamma", Shape: "cancelled"},
	)
	const runsSnapshot = `select string_agg(row(run_id, tenant_id, status, wake_at, claim_token, claimed_at,
		poisoned_at, finished_at, claim_attempts, checkpoint_seq, updated_at)::text, ';' order by id) from docket_runs`
	var before string
	if err := pool.QueryRow(testkit.Context(t), runsSnapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}

	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)

	var after string
	if err := pool.QueryRow(testkit.Context(t), runsSnapshot).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the upgrade changed run columns other than the marker:\nbefore %s\nafter  %s", before, after)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at = claimed_at`); got != 5 {
		t.Fatalf("runs with marker = claimed_at: %d, want the 5 healthy claimed runs", got)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs
		where (tenant_admitted_at is not null) <> (run_id in ('b-claimed', 'a-claimed-1', 'a-claimed-2', 'a-claimed-3', 'n-claimed'))`); got != 0 {
		t.Fatalf("%d runs have a marker they should not have, or lack one", got)
	}

	want := []testkit.MigrationScheduleRow{{Scope: "beta", Position: 1, Unfinished: 2}, {Scope: "alpha", Position: 2, Unfinished: 7}, {Scope: "", Position: 3, Unfinished: 2}, {Scope: "gamma", Position: 4, Unfinished: 0}}
	if got := testkit.MigrationSchedule(t, pool); !slices.Equal(got, want) {
		t.Fatalf("schedule after upgrade = %+v, want %+v", got, want)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_partitions
		where max_active is null and partition_version = 0 and admission_epoch = 0`); got != 4 {
		t.Fatalf("fresh partitions = %d, want 4", got)
	}
	var ring []int64
	rows, err := pool.Query(testkit.Context(t), `select ring_position from docket_claim_schedule where unfinished_count > 0 order by 1`)
	if err == nil {
		ring, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ring, []int64{1, 2, 3}) {
		t.Fatalf("ring = %v, want [1 2 3]", ring)
	}

	// Alpha holds three admissions; a cap of two makes one of them debt and
	// trims nothing.
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	got, err := client.InspectClaimPolicy(testkit.Context(t), docket.Tenant("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Admitted != 3 || got.AdmittedClaimed != 3 || got.Debt != 1 || got.Queued != 2 || got.Unfinished != 7 {
		t.Fatalf("alpha after upgrade and a cap of 2: %+v, want 3 admitted claimed, debt 1, 2 queued, 7 unfinished", got)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at is not null`); n != 5 {
		t.Fatalf("markers after the first TenantFair start = %d, want 5 (nothing trimmed)", n)
	}
}

func TestMigrationCustomSchemasAreIndependentDomains(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{Schema: "alpha"})
	testkit.MigrateOrFail(t, testkit.MigrationURLWithSearchPath(t, url, "beta"), testkit.MigrateCall{})
	// The same physical schema named again is the same domain: nothing to do.
	testkit.MigrateOrFail(t, testkit.MigrationURLWithSearchPath(t, url, "alpha"), testkit.MigrateCall{})
	for _, schema := range []string{"alpha", "beta"} {
		testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{Schema: schema}, testkit.MigrationAllVersions...)
	}
	admin := testkit.PoolFor(t, url)
	if got := testkit.QueryInt64(t, admin, `select count(*) from pg_class where relnamespace = 'public'::regnamespace`); got != 0 {
		t.Fatalf("public holds %d relations, want none", got)
	}
	testkit.MigrationExpectSameCatalog(t, "beta versus alpha", testkit.MigrationCatalog(t, admin, "beta"), testkit.MigrationCatalog(t, admin, "alpha"))

	alpha := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, url, "alpha"))
	beta := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, url, "beta"))
	testkit.MigrationInsertRuns(t, alpha, testkit.MigrationRun{RunID: "a1", Tenant: "t1", Shape: "ready"}, testkit.MigrationRun{RunID: "a2", Tenant: "t2", Shape: "ready"})
	testkit.MigrationInsertRuns(t, beta, testkit.MigrationRun{RunID: "b1", Tenant: "t2", Shape: "ready"})
	// A qualified write from a session bound to beta still lands in alpha's
	// ring: the trigger functions are bound to their own schema.
	testkit.ExecSQL(t, beta, `insert into alpha.docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		values ('a3', 't3', 'g', 'h1', '{}', 'running', now())`)

	if got, want := testkit.MigrationSchedule(t, alpha), []testkit.MigrationScheduleRow{{Scope: "t1", Position: 1, Unfinished: 1}, {Scope: "t2", Position: 2, Unfinished: 1}, {Scope: "t3", Position: 3, Unfinished: 1}}; !slices.Equal(got, want) {
		t.Fatalf("alpha schedule = %+v, want %+v", got, want)
	}
	if got, want := testkit.MigrationSchedule(t, beta), []testkit.MigrationScheduleRow{{Scope: "t2", Position: 1, Unfinished: 1}}; !slices.Equal(got, want) {
		t.Fatalf("beta schedule = %+v, want %+v", got, want)
	}

	testkit.OpenClient(t, alpha, testkit.TenantFairConfig(3))
	testkit.OpenClient(t, beta, testkit.TenantFairConfig(5))
	if got := testkit.QueryInt64(t, alpha, `select max_active from docket_claim_policy`); got != 3 {
		t.Fatalf("alpha default = %d, want 3", got)
	}
	if got := testkit.QueryInt64(t, beta, `select max_active from docket_claim_policy`); got != 5 {
		t.Fatalf("beta default = %d, want 5", got)
	}
	// One claim in alpha moves alpha's cursor only.
	testkit.ExecSQL(t, alpha, `select * from docket_tenant_fair_claim(now(), now() - interval '1 minute', 1, 10, null, false)`)
	if got := testkit.QueryInt64(t, alpha, `select scan_ring_position from docket_claim_policy`); got == 0 {
		t.Fatalf("alpha's cursor did not move")
	}
	if got := testkit.QueryInt64(t, beta, `select scan_ring_position from docket_claim_policy`); got != 0 {
		t.Fatalf("beta's cursor moved to %d by a claim in alpha", got)
	}
	if got := testkit.QueryInt64(t, beta, `select count(*) from docket_runs where claim_token is not null`); got != 0 {
		t.Fatalf("a claim in alpha claimed %d runs of beta", got)
	}
}

func TestMigrationFailedUpgradeLeavesV1Intact(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	pool := testkit.PoolFor(t, url)
	testkit.MigrationInsertRuns(t, pool, testkit.MigrationRun{RunID: "r1", Tenant: "t1", Shape: "claimed"}, testkit.MigrationRun{RunID: "r2", Tenant: "t1", Shape: "ready"}, testkit.MigrationRun{RunID: "r3", Tenant: "", Shape: "done"})
	// The claim function comes after every table, trigger and backfill of V2;
	// an object already holding its fixed identity makes V2 fail there.
	testkit.ExecSQL(t, pool, `create function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean)
		returns void language sql as ''`)
	before := testkit.MigrationCatalog(t, pool, "public")
	const runsSnapshot = `select string_agg(row(r.*)::text, ';' order by id) from docket_runs r`
	var runsBefore string
	if err := pool.QueryRow(testkit.Context(t), runsSnapshot).Scan(&runsBefore); err != nil {
		t.Fatal(err)
	}

	err := testkit.URLMigrator(t, url, docket.MigratorConfig{}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{})
	if err == nil {
		t.Fatal("V2 applied over a conflicting docket_tenant_fair_claim")
	}
	if !strings.Contains(err.Error(), "applying 20261101000002_docket_v2.sql: ERROR: cannot change return type of existing function (SQLSTATE 42P13)") {
		t.Fatalf("V2 failed elsewhere than at the claim function: %v", err)
	}

	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationV1Version)
	testkit.MigrationExpectSameCatalog(t, "after the failed upgrade", testkit.MigrationCatalog(t, pool, "public"), before)
	var runsAfter string
	if err := pool.QueryRow(testkit.Context(t), runsSnapshot).Scan(&runsAfter); err != nil {
		t.Fatal(err)
	}
	if runsAfter != runsBefore {
		t.Fatalf("runs changed by a failed upgrade:\nbefore %s\nafter  %s", runsBefore, runsAfter)
	}

	// Removing the conflict lets the same upgrade succeed.
	testkit.ExecSQL(t, pool, `drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean)`)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at = claimed_at`); got != 1 {
		t.Fatalf("marked runs after the retried upgrade = %d, want 1", got)
	}
}

func TestMigrationConcurrentFirstPartitionCreation(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	first, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx)
	second, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Rollback(ctx)
	txInsertRun(t, first, "c1", "newcomer")
	var secondPID uint32
	if err := second.QueryRow(ctx, "select pg_backend_pid()").Scan(&secondPID); err != nil {
		t.Fatal(err)
	}

	// The second insert must wait for the first transaction's partition.
	done := make(chan error, 1)
	go func() {
		_, err := second.Exec(ctx, insertRunSQL, "c2", "newcomer")
		done <- err
	}()
	testkit.MigrationAwaitLockWait(t, pool, secondPID)
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second insert: %v", err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_partitions where scope_key = 'newcomer'`); got != 1 {
		t.Fatalf("partitions of newcomer = %d, want 1", got)
	}
	if got := testkit.QueryInt64(t, pool, `select unfinished_count from docket_claim_schedule where scope_key = 'newcomer'`); got != 2 {
		t.Fatalf("unfinished_count of newcomer = %d, want 2", got)
	}
}

func TestMigrationRolledBackFirstRunLeavesNoPartition(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txInsertRun(t, tx, "ghost-1", "ghost")
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.QueryInt64(t, pool, `select (select count(*) from docket_claim_partitions where scope_key = 'ghost')
		+ (select count(*) from docket_claim_schedule where scope_key = 'ghost')
		+ (select count(*) from docket_runs where tenant_id = 'ghost')`); got != 0 {
		t.Fatalf("a rolled-back first run left %d rows behind", got)
	}

	// When the creator rolls back while another transaction waits on its
	// partition, the waiter creates the partition itself.
	first, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx)
	second, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Rollback(ctx)
	txInsertRun(t, first, "ghost-2", "ghost")
	var secondPID uint32
	if err := second.QueryRow(ctx, "select pg_backend_pid()").Scan(&secondPID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := second.Exec(ctx, insertRunSQL, "ghost-3", "ghost")
		done <- err
	}()
	testkit.MigrationAwaitLockWait(t, pool, secondPID)
	if err := first.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second insert: %v", err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.MigrationSchedule(t, pool); len(got) != 1 || got[0].Scope != "ghost" || got[0].Unfinished != 1 {
		t.Fatalf("schedule = %+v, want one ghost row counting 1", got)
	}
}

// insertRunSQL inserts one ready run of a tenant.
const insertRunSQL = `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
	values ($1, $2, 'g', 'h1', '{}', 'running', now())`

func txInsertRun(t testing.TB, tx pgx.Tx, runID, tenant string) {
	t.Helper()
	if _, err := tx.Exec(testkit.Context(t), insertRunSQL, runID, tenant); err != nil {
		t.Fatalf("insert %s: %v", runID, err)
	}
}

// TestMigrationPopulatedUpgradeKeepsTheFullRingWalk: V1 -> V2 on a
// populated domain leaves every partition awake and parking off, gives the
// existing runs no attempts, no errors and no trace context, and the next
// TenantFair start with an unchanged configuration writes nothing: claims
// walk the whole unfinished ring.
func TestMigrationPopulatedUpgradeKeepsTheFullRingWalk(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	pool := testkit.PoolFor(t, url)
	testkit.MigrationInsertRuns(t, pool,
		testkit.MigrationRun{RunID: "a-future", Tenant: "alpha", Shape: "future"},
		testkit.MigrationRun{RunID: "b-waiting", Tenant: "beta", Shape: "waiting"},
		testkit.MigrationRun{RunID: "c-ready", Tenant: "gamma", Shape: "ready"},
		testkit.MigrationRun{RunID: "c-claimed", Tenant: "gamma", Shape: "claimed"},
	)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 0 {
		t.Fatalf("%d partitions parked by the upgrade", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where trace_context is not null`); n != 0 {
		t.Fatalf("%d existing runs got a trace context from the upgrade", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where attempt = 0 and errors = '[]'`); n != 4 {
		t.Fatalf("%d of 4 runs start V2 with no attempts and no errors", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_policy where not park_dormant and not configured_park_dormant`); n != 1 {
		t.Fatal("the upgrade did not leave parking off")
	}

	testkit.ExecSQL(t, pool, `update docket_claim_policy set admission_mode = 'tenant_fair', max_active = 3,
		configured_max_active = 3, policy_version = 1, initialized_at = now()`)
	const snapshot = `select (select string_agg(to_jsonb(r)::text, ';' order by id) from docket_runs r)
		|| (select string_agg(row(s.scope_key, s.ring_position, s.unfinished_count, s.updated_at)::text, ';' order by ring_position)
		      from docket_claim_schedule s)
		|| (select row(p.admission_mode, p.max_active, p.configured_max_active, p.policy_version, p.scan_ring_position,
		              p.updated_at)::text from docket_claim_policy p)`
	var before, after string
	if err := pool.QueryRow(testkit.Context(t), snapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(3))
	if err := pool.QueryRow(testkit.Context(t), snapshot).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the first start after the upgrade wrote:\nbefore %s\nafter  %s", before, after)
	}
	tr, err := client.TraceClaimDue(testkit.Context(t), docket.ClaimRequest{Now: time.Now(), Limit: 1, ClaimTTL: time.Hour,
		MaxClaimAttempts: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Inspections) != 3 || tr.Inspections[2].ScopeKey != "gamma" || tr.Inspections[2].Disposition != policy.DispositionGrant {
		t.Fatalf("first claim after the upgrade: %+v, want alpha and beta as empty pages, then gamma's grant", tr.Inspections)
	}
	for _, in := range tr.Inspections {
		if in.Parked || in.Woken != 0 {
			t.Fatalf("a spec-mode visit parked or swept: %+v", in)
		}
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 0 {
		t.Fatalf("%d partitions parked in full-ring mode", n)
	}
}

// A schema a pre-release build migrated (its ledger records one of V3 to
// V24, which release 0.1.0 squashed into V2) is refused by up, down and
// Open with ErrPreReleaseSchema, saying what it is and what to do, and
// nothing changes.
func TestPreReleaseSchemaIsRefused(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	pool := testkit.PoolFor(t, url)
	testkit.ExecSQL(t, pool, `insert into docket_schema_migrations (version) values ('20261203000024')`)
	before := testkit.MigrationCatalog(t, pool, "public")
	const advice = "(pre-release V24); release 0.1.0 ships schema version 2 and no release shipped V3 to V24, so nothing upgrades from them: drop the schema (or restore a V1 or V2 backup) and migrate again"
	for _, direction := range []docket.MigrateDirection{docket.MigrateUp, docket.MigrateDown} {
		err := testkit.URLMigrator(t, url, docket.MigratorConfig{}).Migrate(testkit.Context(t), direction, docket.MigrateOptions{})
		want := "docket: schema migrated by a pre-release build (docket: migrations out of order): the ledger in schema public records migration 20261203000024 " + advice
		if !errors.Is(err, docket.ErrPreReleaseSchema) || !errors.Is(err, docket.ErrMigrationOrder) || err.Error() != want {
			t.Fatalf("migrate %v of a pre-release schema: %v\nwant %s", direction, err, want)
		}
	}
	_, err := docket.Open(testkit.Context(t), pool, testkit.TenantFairConfig(4))
	if !errors.Is(err, docket.ErrPreReleaseSchema) || !errors.Is(err, docket.ErrSchemaMismatch) || !strings.Contains(err.Error(), "records migration 20261203000024 "+advice) {
		t.Fatalf("Open of a pre-release schema: %v", err)
	}
	testkit.MigrationExpectSameCatalog(t, "after the refusals", testkit.MigrationCatalog(t, pool, "public"), before)
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_schema_migrations where version in ('20261101000001', '20261101000002', '20261203000024')`); n != 3 {
		t.Fatalf("the ledger holds %d of its 3 versions after the refusals", n)
	}
}
