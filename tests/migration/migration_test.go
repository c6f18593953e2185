package migration

import (
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

// v2Objects are objects only V2 creates; each must be absent at V1.
var v2Objects = []string{
	"relation docket_claim_policy kind=r",
	"relation docket_claim_partitions kind=r",
	"relation docket_claim_schedule kind=r",
	"relation docket_claim_schedule_ring_idx kind=i",
	"relation docket_runs_admitted_idx kind=i",
}

// hasPrefix reports whether any catalog entry starts with prefix.
func hasPrefix(objects []string, prefix string) bool {
	return slices.ContainsFunc(objects, func(o string) bool { return strings.HasPrefix(o, prefix) })
}

func TestMigrationFreshInstallDownToV1AndUpAgain(t *testing.T) {
	t.Parallel()
	v1URL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, v1URL, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	testkit.MigrationExpectApplied(t, v1URL, testkit.MigrateCall{}, testkit.MigrationV1Version)
	v1 := testkit.MigrationCatalog(t, testkit.PoolFor(t, v1URL), "public")
	for _, o := range v2Objects {
		if slices.Contains(v1, o) {
			t.Fatalf("V1 already has %s", o)
		}
	}

	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	pool := testkit.PoolFor(t, url)
	v2 := testkit.MigrationCatalog(t, pool, "public")
	for _, o := range v2Objects {
		if !slices.Contains(v2, o) && !droppedLater(o) {
			t.Fatalf("a fresh install lacks %s", o)
		}
	}
	for _, prefix := range []string{
		"column docket_runs.tenant_admitted_at timestamp with time zone",
		"function docket_tenant_fair_claim(p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean)",
		"trigger docket_runs.docket_runs_track_insert_trg ",
	} {
		if !hasPrefix(v2, prefix) {
			t.Fatalf("a fresh install lacks %s", prefix)
		}
	}
	if got := testkit.QueryInt64(t, pool, "select count(*) from docket_claim_policy where admission_mode = 'legacy' and max_active is null and policy_version = 0"); got != 1 {
		t.Fatalf("fresh policy rows in their initial shape = %d, want 1", got)
	}

	// Each migration's down restores exactly the catalog of the version
	// below it (the down of V3 restores the full-ring walk's claim function
	// too: its source hash is part of the listing); each migration's own
	// objects exist above it and not below.
	catalogs := map[string][]string{testkit.MigrationV1Version: v1, testkit.MigrationAllVersions[len(testkit.MigrationAllVersions)-1]: v2}
	for i := len(testkit.MigrationAllVersions) - 2; i >= 1; i-- {
		below := pgtest.NewEmptyDatabase(t)
		testkit.MigrateOrFail(t, below, testkit.MigrateCall{Target: testkit.MigrationAllVersions[i]})
		testkit.MigrationExpectApplied(t, below, testkit.MigrateCall{}, testkit.MigrationAllVersions[:i+1]...)
		catalogs[testkit.MigrationAllVersions[i]] = testkit.MigrationCatalog(t, testkit.PoolFor(t, below), "public")
	}
	for i := 1; i < len(testkit.MigrationAllVersions); i++ {
		for _, o := range objects[testkit.MigrationAllVersions[i]] {
			if hasPrefix(catalogs[testkit.MigrationAllVersions[i-1]], o) {
				t.Fatalf("%s already has %s", testkit.MigrationAllVersions[i-1], o)
			}
			if !hasPrefix(catalogs[testkit.MigrationAllVersions[i]], o) {
				t.Fatalf("%s lacks %s", testkit.MigrationAllVersions[i], o)
			}
		}
		for _, o := range dropped[testkit.MigrationAllVersions[i]] {
			if !hasPrefix(catalogs[testkit.MigrationAllVersions[i-1]], o) {
				t.Fatalf("%s lacks %s, which %s drops", testkit.MigrationAllVersions[i-1], o, testkit.MigrationAllVersions[i])
			}
			if hasPrefix(catalogs[testkit.MigrationAllVersions[i]], o) {
				t.Fatalf("%s still has %s", testkit.MigrationAllVersions[i], o)
			}
		}
	}
	// V7 replaces both claim functions (and its down restores them, by the
	// catalog comparison below).
	for _, fn := range []string{"docket_tenant_fair_claim(", "docket_legacy_claim("} {
		if got, want := entry(t, catalogs[testkit.MigrationV7Version], "function "+fn), entry(t, catalogs[testkit.MigrationV6Version], "function "+fn); got == want {
			t.Fatalf("V7 did not replace %s: %s", fn, got)
		}
	}
	// V8 replaces the error history's entry check, to admit retry entries.
	const entryCheck = "constraint docket_runs.docket_runs_errors_entry_check "
	if got, was := entry(t, catalogs[testkit.MigrationV8Version], entryCheck), entry(t, catalogs[testkit.MigrationV7Version], entryCheck); got == was || !strings.Contains(got, `"retry"`) || strings.Contains(was, `"retry"`) {
		t.Fatalf("V8 did not replace the entry check with one that admits retry entries:\nV8 %s\nV7 %s", got, was)
	}
	for i := len(testkit.MigrationAllVersions) - 1; i >= 1; i-- {
		testkit.MigrateOrFail(t, url, testkit.MigrateCall{Direction: docket.MigrateDown})
		testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions[:i]...)
		testkit.MigrationExpectSameCatalog(t, "after down to "+testkit.MigrationAllVersions[i-1], testkit.MigrationCatalog(t, pool, "public"), catalogs[testkit.MigrationAllVersions[i-1]])
	}

	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	testkit.MigrationExpectSameCatalog(t, "after up again", testkit.MigrationCatalog(t, pool, "public"), catalogs[testkit.MigrationAllVersions[len(testkit.MigrationAllVersions)-1]])
}

// objects are, by version, catalog entry prefixes only that migration
// creates.
var objects = map[string][]string{
	testkit.MigrationV2Version: v2Objects,
	testkit.MigrationV3Version: v3Objects,
	testkit.MigrationV4Version: {
		"column docket_runs.attempt integer notnull=true generated= identity= default=0",
		"column docket_runs.errors jsonb notnull=true generated= identity= default='[]'::jsonb",
		"constraint docket_runs.docket_runs_attempt_check ",
		"constraint docket_runs.docket_runs_errors_array_check ",
		"constraint docket_runs.docket_runs_errors_bound_check ",
		"constraint docket_runs.docket_runs_errors_entry_check ",
	},
	testkit.MigrationV5Version: {
		"relation docket_schedules kind=r",
		"relation docket_schedules_due_idx kind=i",
		"constraint docket_schedules.docket_schedules_cadence_check CHECK",
		"constraint docket_schedules.docket_schedules_scope_name_key UNIQUE (scope_key, name)",
	},
	testkit.MigrationV6Version: {
		"column docket_runs.trace_context jsonb notnull=false",
		"constraint docket_runs.docket_runs_trace_context_check ",
	},
	testkit.MigrationV7Version: {
		"relation docket_claim_pending kind=c",
		"function docket_claim_precheck(p_engine text, p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean, OUT o_error_reason text, OUT o_restore_lock_timeout text) returns record",
	},
	testkit.MigrationV8Version: {
		"function docket_run_phase(r docket_runs, observed_at timestamp with time zone) returns text",
		"relation docket_runs_finished_idx kind=i",
		"index docket_runs_finished_idx CREATE INDEX docket_runs_finished_idx ON SCHEMA.docket_runs USING btree (finished_at, id) WHERE ",
	},
}

// dropped are, by version, catalog entry prefixes that migration removes:
// present in the version below it, absent from it.
var dropped = map[string][]string{
	testkit.MigrationV22Version: {
		"relation docket_runs_admitted_idx kind=i",
		"function docket_run_marked(r docket_runs) returns boolean",
	},
}

// droppedLater reports whether some migration drops the object o.
func droppedLater(o string) bool {
	for _, prefixes := range dropped {
		if slices.Contains(prefixes, o) {
			return true
		}
	}
	return false
}

// entry returns the one catalog entry starting with prefix.
func entry(t testing.TB, objects []string, prefix string) string {
	t.Helper()
	var found []string
	for _, o := range objects {
		if strings.HasPrefix(o, prefix) {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("catalog entries starting with %q: %v, want exactly one", prefix, found)
	}
	return found[0]
}

// v3Objects are catalog entry prefixes only V3 creates.
var v3Objects = []string{
	"column docket_claim_schedule.parked_until timestamp with time zone notnull=false",
	"column docket_claim_policy.park_dormant boolean notnull=true",
	"column docket_claim_policy.configured_park_dormant boolean notnull=true",
	"relation docket_claim_schedule_awake_idx kind=i",
	"relation docket_claim_schedule_wake_idx kind=i",
	"relation docket_runs_unadmitted_claimed_idx kind=i",
	"function docket_runs_wake_partition() returns trigger",
	"trigger docket_runs.docket_runs_wake_partition_trg ",
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
	if !strings.Contains(err.Error(), "docket_tenant_fair_claim") {
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

// TestMigrationPopulatedUpgradeToV3KeepsTheFullRingWalk: V3 on a
// populated V2 domain changes no run, no partition and no policy value,
// leaves every partition awake and parking off, and the next TenantFair
// start with an unchanged configuration writes nothing: claims walk the
// whole unfinished ring as before.
func TestMigrationPopulatedUpgradeToV3KeepsTheFullRingWalk(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{Target: testkit.MigrationV2Version})
	pool := testkit.PoolFor(t, url)
	testkit.MigrationInsertRuns(t, pool,
		testkit.MigrationRun{RunID: "a-future", Tenant: "alpha", Shape: "future"},
		testkit.MigrationRun{RunID: "b-waiting", Tenant: "beta", Shape: "waiting"},
		testkit.MigrationRun{RunID: "c-ready", Tenant: "gamma", Shape: "ready"},
		testkit.MigrationRun{RunID: "c-claimed", Tenant: "gamma", Shape: "claimed"},
	)
	testkit.ExecSQL(t, pool, `update docket_claim_policy set admission_mode = 'tenant_fair', max_active = 3,
		configured_max_active = 3, policy_version = 1, initialized_at = now()`)
	// The runs are compared without V4's and V6's columns, which the
	// upgrade adds with their empty values (checked below).
	const snapshot = `select (select string_agg((to_jsonb(r) - 'attempt' - 'errors' - 'trace_context')::text, ';' order by id) from docket_runs r)
		|| (select string_agg(row(s.scope_key, s.ring_position, s.unfinished_count, s.updated_at)::text, ';' order by ring_position)
		      from docket_claim_schedule s)
		|| (select row(p.admission_mode, p.max_active, p.configured_max_active, p.policy_version, p.scan_ring_position,
		              p.updated_at)::text from docket_claim_policy p)`
	var before string
	if err := pool.QueryRow(testkit.Context(t), snapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}

	testkit.MigrateOrFail(t, url, testkit.MigrateCall{})
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	var after string
	if err := pool.QueryRow(testkit.Context(t), snapshot).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the upgrade changed existing rows:\nbefore %s\nafter  %s", before, after)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 0 {
		t.Fatalf("%d partitions parked by the upgrade", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where trace_context is not null`); n != 0 {
		t.Fatalf("%d existing runs got a trace context from the upgrade", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where attempt = 0 and errors = '[]'`); n != 4 {
		t.Fatalf("%d of 4 runs start V4 with no attempts and no errors", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_policy where not park_dormant and not configured_park_dormant`); n != 1 {
		t.Fatal("the upgrade did not leave parking off")
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
