package tests

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/policy"
)

// Released migration versions; a released migration never changes.
const (
	migV1Version = "20261101000001"
	migV2Version = "20261101000002"
	migV3Version = "20261201000003"
	migV4Version = "20261201000004"
	migV5Version = "20261201000005"
	migV6Version = "20261201000006"
	migV7Version = "20261201000007"
)

// migAllVersions are every migration's version, oldest first.
var migAllVersions = []string{migV1Version, migV2Version, migV3Version, migV4Version, migV5Version, migV6Version, migV7Version}

// migCatalogQuery lists every object of one schema with its full definition:
// relations (tables, sequences, indexes), columns, constraints, indexes,
// functions (with a hash of their source) and user triggers. Two schemas
// with equal listings have the same shape.
const migCatalogQuery = `
select 'relation ' || c.relname || ' kind=' || c.relkind::text
  from pg_class c where c.relnamespace = $1::regnamespace
union all
select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || ' notnull=' || a.attnotnull::text || ' generated=' || a.attgenerated::text || ' identity=' || a.attidentity::text
       || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
  from pg_attribute a
  join pg_class c on c.oid = a.attrelid
  left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
 where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
union all
select 'constraint ' || c.relname || '.' || k.conname || ' ' || pg_get_constraintdef(k.oid)
  from pg_constraint k join pg_class c on c.oid = k.conrelid
 where k.connamespace = $1::regnamespace
union all
select 'index ' || i.relname || ' ' || pg_get_indexdef(x.indexrelid)
  from pg_index x join pg_class i on i.oid = x.indexrelid
 where i.relnamespace = $1::regnamespace
union all
select 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') returns '
       || pg_get_function_result(p.oid) || ' src=' || md5(p.prosrc) || ' config=' || coalesce(array_to_string(p.proconfig, ','), '')
  from pg_proc p where p.pronamespace = $1::regnamespace
union all
select 'trigger ' || c.relname || '.' || t.tgname || ' ' || pg_get_triggerdef(t.oid)
  from pg_trigger t join pg_class c on c.oid = t.tgrelid
 where c.relnamespace = $1::regnamespace and not t.tgisinternal
order by 1`

// migCatalog returns the sorted object listing of schema.
func migCatalog(t testing.TB, pool *pgxpool.Pool, schema string) []string {
	t.Helper()
	rows, err := pool.Query(testContext(t), migCatalogQuery, schema)
	if err != nil {
		t.Fatalf("catalog of %s: %v", schema, err)
	}
	objects, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("catalog of %s: %v", schema, err)
	}
	// Definitions name their own schema; listings of two schemas compare
	// equal when only that name differs.
	own := strings.NewReplacer(schema+".", "SCHEMA.", "search_path="+schema, "search_path=SCHEMA")
	for i, o := range objects {
		objects[i] = own.Replace(o)
	}
	return objects
}

// migExpectSameCatalog fails with the differing entries when got != want.
func migExpectSameCatalog(t testing.TB, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	t.Fatalf("%s: catalog differs\nmissing:\n  %s\nextra:\n  %s", what,
		strings.Join(missing, "\n  "), strings.Join(extra, "\n  "))
}

// migrateOrFail runs docket.Migrate and fails the test on error.
func migrateOrFail(t testing.TB, databaseURL string, opts docket.MigrateOptions) {
	t.Helper()
	if err := docket.Migrate(testContext(t), databaseURL, opts); err != nil {
		t.Fatalf("migrate %+v: %v", opts, err)
	}
}

// migAppliedVersions lists the versions MigrateStatus reports as applied.
func migAppliedVersions(t testing.TB, databaseURL string, opts docket.MigrateOptions) []string {
	t.Helper()
	statuses, err := docket.MigrateStatus(testContext(t), databaseURL, opts)
	if err != nil {
		t.Fatalf("migrate status: %v", err)
	}
	var applied []string
	for _, s := range statuses {
		if s.Applied {
			version, _, _ := strings.Cut(s.Name, "_")
			applied = append(applied, version)
		}
	}
	return applied
}

// migExpectApplied fails unless exactly want is applied.
func migExpectApplied(t testing.TB, databaseURL string, opts docket.MigrateOptions, want ...string) {
	t.Helper()
	if got := migAppliedVersions(t, databaseURL, opts); !slices.Equal(got, want) {
		t.Fatalf("applied migrations = %v, want %v", got, want)
	}
}

// migV2Objects are objects only V2 creates; each must be absent at V1.
var migV2Objects = []string{
	"relation docket_claim_policy kind=r",
	"relation docket_claim_partitions kind=r",
	"relation docket_claim_schedule kind=r",
	"relation docket_claim_schedule_ring_idx kind=i",
	"relation docket_runs_admitted_idx kind=i",
}

// migHasPrefix reports whether any catalog entry starts with prefix.
func migHasPrefix(objects []string, prefix string) bool {
	return slices.ContainsFunc(objects, func(o string) bool { return strings.HasPrefix(o, prefix) })
}

func TestMigrationFreshInstallDownToV1AndUpAgain(t *testing.T) {
	t.Parallel()
	v1URL := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, v1URL, docket.MigrateOptions{Target: migV1Version})
	migExpectApplied(t, v1URL, docket.MigrateOptions{}, migV1Version)
	v1 := migCatalog(t, poolFor(t, v1URL), "public")
	for _, o := range migV2Objects {
		if slices.Contains(v1, o) {
			t.Fatalf("V1 already has %s", o)
		}
	}

	url := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, url, docket.MigrateOptions{})
	migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions...)
	pool := poolFor(t, url)
	v2 := migCatalog(t, pool, "public")
	for _, o := range migV2Objects {
		if !slices.Contains(v2, o) {
			t.Fatalf("a fresh install lacks %s", o)
		}
	}
	for _, prefix := range []string{
		"column docket_runs.tenant_admitted_at timestamp with time zone",
		"function docket_tenant_fair_claim(p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean)",
		"trigger docket_runs.docket_runs_track_insert_trg ",
	} {
		if !migHasPrefix(v2, prefix) {
			t.Fatalf("a fresh install lacks %s", prefix)
		}
	}
	if got := queryInt64(t, pool, "select count(*) from docket_claim_policy where admission_mode = 'legacy' and max_active is null and policy_version = 0"); got != 1 {
		t.Fatalf("fresh policy rows in their initial shape = %d, want 1", got)
	}

	// Each migration's down restores exactly the catalog of the version
	// below it (the down of V3 restores the full-ring walk's claim function
	// too: its source hash is part of the listing); each migration's own
	// objects exist above it and not below.
	catalogs := map[string][]string{migV1Version: v1, migAllVersions[len(migAllVersions)-1]: v2}
	for i := len(migAllVersions) - 2; i >= 1; i-- {
		below := pgtest.NewEmptyDatabase(t)
		migrateOrFail(t, below, docket.MigrateOptions{Target: migAllVersions[i]})
		migExpectApplied(t, below, docket.MigrateOptions{}, migAllVersions[:i+1]...)
		catalogs[migAllVersions[i]] = migCatalog(t, poolFor(t, below), "public")
	}
	for i := 1; i < len(migAllVersions); i++ {
		for _, o := range migObjects[migAllVersions[i]] {
			if migHasPrefix(catalogs[migAllVersions[i-1]], o) {
				t.Fatalf("%s already has %s", migAllVersions[i-1], o)
			}
			if !migHasPrefix(catalogs[migAllVersions[i]], o) {
				t.Fatalf("%s lacks %s", migAllVersions[i], o)
			}
		}
	}
	// V7 replaces both claim functions (and its down restores them, by the
	// catalog comparison below).
	for _, fn := range []string{"docket_tenant_fair_claim(", "docket_legacy_claim("} {
		if got, want := migEntry(t, catalogs[migV7Version], "function "+fn), migEntry(t, catalogs[migV6Version], "function "+fn); got == want {
			t.Fatalf("V7 did not replace %s: %s", fn, got)
		}
	}
	for i := len(migAllVersions) - 1; i >= 1; i-- {
		migrateOrFail(t, url, docket.MigrateOptions{Direction: docket.MigrateDown})
		migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions[:i]...)
		migExpectSameCatalog(t, "after down to "+migAllVersions[i-1], migCatalog(t, pool, "public"), catalogs[migAllVersions[i-1]])
	}

	migrateOrFail(t, url, docket.MigrateOptions{})
	migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions...)
	migExpectSameCatalog(t, "after up again", migCatalog(t, pool, "public"), catalogs[migAllVersions[len(migAllVersions)-1]])
}

// migObjects are, by version, catalog entry prefixes only that migration
// creates.
var migObjects = map[string][]string{
	migV2Version: migV2Objects,
	migV3Version: migV3Objects,
	migV4Version: {
		"column docket_runs.attempt integer notnull=true generated= identity= default=0",
		"column docket_runs.errors jsonb notnull=true generated= identity= default='[]'::jsonb",
		"constraint docket_runs.docket_runs_attempt_check ",
		"constraint docket_runs.docket_runs_errors_array_check ",
		"constraint docket_runs.docket_runs_errors_bound_check ",
		"constraint docket_runs.docket_runs_errors_entry_check ",
	},
	migV5Version: {
		"relation docket_schedules kind=r",
		"relation docket_schedules_due_idx kind=i",
		"constraint docket_schedules.docket_schedules_cadence_check CHECK",
		"constraint docket_schedules.docket_schedules_scope_name_key UNIQUE (scope_key, name)",
	},
	migV6Version: {
		"column docket_runs.trace_context jsonb notnull=false",
		"constraint docket_runs.docket_runs_trace_context_check ",
	},
	migV7Version: {
		"relation docket_claim_pending kind=c",
		"function docket_claim_precheck(p_engine text, p_now timestamp with time zone, p_cutoff timestamp with time zone, p_demand integer, p_max_attempts integer, p_preference text, p_trace boolean, OUT o_error_reason text, OUT o_restore_lock_timeout text) returns record",
	},
}

// migEntry returns the one catalog entry starting with prefix.
func migEntry(t testing.TB, objects []string, prefix string) string {
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

// migV3Objects are catalog entry prefixes only V3 creates.
var migV3Objects = []string{
	"column docket_claim_schedule.parked_until timestamp with time zone notnull=false",
	"column docket_claim_policy.park_dormant boolean notnull=true",
	"column docket_claim_policy.configured_park_dormant boolean notnull=true",
	"relation docket_claim_schedule_awake_idx kind=i",
	"relation docket_claim_schedule_wake_idx kind=i",
	"relation docket_runs_unadmitted_claimed_idx kind=i",
	"function docket_runs_wake_partition() returns trigger",
	"trigger docket_runs.docket_runs_wake_partition_trg ",
}

// migRun is one run seeded with plain SQL in a given lifecycle shape.
type migRun struct {
	runID  string
	tenant string // "" is tenantless
	shape  string // a key of migRunShapes
}

// migRunShapes are V1 column values (status, wake_at, claim_token,
// claimed_at, poisoned_at, poison_reason, finished_at) satisfying every row
// check. Times are relative to the statement so rows keep their meaning.
var migRunShapes = map[string]string{
	"ready":     `'running', now() - interval '1 minute', null, null, null, null, null`,
	"future":    `'running', now() + interval '1 hour', null, null, null, null, null`,
	"claimed":   `'running', null, gen_random_uuid(), now() - interval '10 seconds', null, null, null`,
	"waiting":   `'waiting', null, null, null, null, null, null`,
	"poisoned":  `'running', null, null, null, now() - interval '5 seconds', 'max_claim_attempts_exceeded', null`,
	"done":      `'done', null, null, null, null, null, now()`,
	"failed":    `'failed', null, null, null, null, null, now()`,
	"cancelled": `'cancelled', null, null, null, null, null, now()`,
}

// migInsertRuns inserts runs one statement each, in order, with plain SQL
// that works on V1 and V2 alike.
func migInsertRuns(t testing.TB, pool *pgxpool.Pool, runs ...migRun) {
	t.Helper()
	for _, r := range runs {
		values, ok := migRunShapes[r.shape]
		if !ok {
			t.Fatalf("unknown run shape %q", r.shape)
		}
		var tenant *string
		if r.tenant != "" {
			tenant = &r.tenant
		}
		execSQL(t, pool, `insert into docket_runs
			(run_id, tenant_id, graph_id, graph_hash, state,
			 status, wake_at, claim_token, claimed_at, poisoned_at, poison_reason, finished_at)
			values ($1, $2, 'g', 'h1', '{}', `+values+`)`, r.runID, tenant)
	}
}

// migScheduleRow is one ring row joined with its partition.
type migScheduleRow struct {
	scope      string
	position   int64
	unfinished int64
}

// migSchedule lists the ring rows in position order.
func migSchedule(t testing.TB, pool *pgxpool.Pool) []migScheduleRow {
	t.Helper()
	rows, err := pool.Query(testContext(t), `select s.scope_key, s.ring_position, s.unfinished_count
		from docket_claim_schedule s join docket_claim_partitions p using (scope_key)
		order by s.ring_position`)
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (migScheduleRow, error) {
		var s migScheduleRow
		return s, r.Scan(&s.scope, &s.position, &s.unfinished)
	})
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	return out
}

func TestMigrationPopulatedUpgradeBackfillsClaimsOnly(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, url, docket.MigrateOptions{Target: migV1Version})
	pool := poolFor(t, url)
	// First-run order decides ring positions: beta, then alpha, then the
	// tenantless scope, then gamma (which only has terminal runs).
	migInsertRuns(t, pool,
		migRun{"b-claimed", "beta", "claimed"},
		migRun{"a-claimed-1", "alpha", "claimed"},
		migRun{"a-claimed-2", "alpha", "claimed"},
		migRun{"a-claimed-3", "alpha", "claimed"},
		migRun{"a-ready-1", "alpha", "ready"},
		migRun{"a-ready-2", "alpha", "ready"},
		migRun{"a-waiting", "alpha", "waiting"},
		migRun{"a-poisoned", "alpha", "poisoned"},
		migRun{"a-done", "alpha", "done"},
		migRun{"b-future", "beta", "future"},
		migRun{"b-failed", "beta", "failed"},
		migRun{"n-claimed", "", "claimed"},
		migRun{"n-ready", "", "ready"},
		migRun{"g-done", "gamma", "done"},
		migRun{"g-cancelled", "gamma", "cancelled"},
	)
	const runsSnapshot = `select string_agg(row(run_id, tenant_id, status, wake_at, claim_token, claimed_at,
		poisoned_at, finished_at, claim_attempts, checkpoint_seq, updated_at)::text, ';' order by id) from docket_runs`
	var before string
	if err := pool.QueryRow(testContext(t), runsSnapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}

	migrateOrFail(t, url, docket.MigrateOptions{})
	migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions...)

	var after string
	if err := pool.QueryRow(testContext(t), runsSnapshot).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the upgrade changed run columns other than the marker:\nbefore %s\nafter  %s", before, after)
	}
	if got := queryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at = claimed_at`); got != 5 {
		t.Fatalf("runs with marker = claimed_at: %d, want the 5 healthy claimed runs", got)
	}
	if got := queryInt64(t, pool, `select count(*) from docket_runs
		where (tenant_admitted_at is not null) <> (run_id in ('b-claimed', 'a-claimed-1', 'a-claimed-2', 'a-claimed-3', 'n-claimed'))`); got != 0 {
		t.Fatalf("%d runs have a marker they should not have, or lack one", got)
	}

	want := []migScheduleRow{{"beta", 1, 2}, {"alpha", 2, 7}, {"", 3, 2}, {"gamma", 4, 0}}
	if got := migSchedule(t, pool); !slices.Equal(got, want) {
		t.Fatalf("schedule after upgrade = %+v, want %+v", got, want)
	}
	if got := queryInt64(t, pool, `select count(*) from docket_claim_partitions
		where max_active is null and partition_version = 0 and admission_epoch = 0`); got != 4 {
		t.Fatalf("fresh partitions = %d, want 4", got)
	}
	var ring []int64
	rows, err := pool.Query(testContext(t), `select ring_position from docket_claim_schedule where unfinished_count > 0 order by 1`)
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
	client := openClient(t, pool, tenantFairConfig(2))
	got, err := client.InspectClaimPolicy(testContext(t), docket.Tenant("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Admitted != 3 || got.AdmittedClaimed != 3 || got.Debt != 1 || got.Queued != 2 || got.Unfinished != 7 {
		t.Fatalf("alpha after upgrade and a cap of 2: %+v, want 3 admitted claimed, debt 1, 2 queued, 7 unfinished", got)
	}
	if n := queryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at is not null`); n != 5 {
		t.Fatalf("markers after the first TenantFair start = %d, want 5 (nothing trimmed)", n)
	}
}

func TestMigrationCustomSchemasAreIndependentDomains(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, url, docket.MigrateOptions{Schema: "alpha"})
	migrateOrFail(t, migURLWithSearchPath(t, url, "beta"), docket.MigrateOptions{})
	// The same physical schema named again is the same domain: nothing to do.
	migrateOrFail(t, migURLWithSearchPath(t, url, "alpha"), docket.MigrateOptions{})
	for _, schema := range []string{"alpha", "beta"} {
		migExpectApplied(t, url, docket.MigrateOptions{Schema: schema}, migAllVersions...)
	}
	admin := poolFor(t, url)
	if got := queryInt64(t, admin, `select count(*) from pg_class where relnamespace = 'public'::regnamespace`); got != 0 {
		t.Fatalf("public holds %d relations, want none", got)
	}
	migExpectSameCatalog(t, "beta versus alpha", migCatalog(t, admin, "beta"), migCatalog(t, admin, "alpha"))

	alpha := poolFor(t, migURLWithSearchPath(t, url, "alpha"))
	beta := poolFor(t, migURLWithSearchPath(t, url, "beta"))
	migInsertRuns(t, alpha, migRun{"a1", "t1", "ready"}, migRun{"a2", "t2", "ready"})
	migInsertRuns(t, beta, migRun{"b1", "t2", "ready"})
	// A qualified write from a session bound to beta still lands in alpha's
	// ring: the trigger functions are bound to their own schema.
	execSQL(t, beta, `insert into alpha.docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		values ('a3', 't3', 'g', 'h1', '{}', 'running', now())`)

	if got, want := migSchedule(t, alpha), []migScheduleRow{{"t1", 1, 1}, {"t2", 2, 1}, {"t3", 3, 1}}; !slices.Equal(got, want) {
		t.Fatalf("alpha schedule = %+v, want %+v", got, want)
	}
	if got, want := migSchedule(t, beta), []migScheduleRow{{"t2", 1, 1}}; !slices.Equal(got, want) {
		t.Fatalf("beta schedule = %+v, want %+v", got, want)
	}

	openClient(t, alpha, tenantFairConfig(3))
	openClient(t, beta, tenantFairConfig(5))
	if got := queryInt64(t, alpha, `select max_active from docket_claim_policy`); got != 3 {
		t.Fatalf("alpha default = %d, want 3", got)
	}
	if got := queryInt64(t, beta, `select max_active from docket_claim_policy`); got != 5 {
		t.Fatalf("beta default = %d, want 5", got)
	}
	// One claim in alpha moves alpha's cursor only.
	execSQL(t, alpha, `select * from docket_tenant_fair_claim(now(), now() - interval '1 minute', 1, 10, null, false)`)
	if got := queryInt64(t, alpha, `select scan_ring_position from docket_claim_policy`); got == 0 {
		t.Fatalf("alpha's cursor did not move")
	}
	if got := queryInt64(t, beta, `select scan_ring_position from docket_claim_policy`); got != 0 {
		t.Fatalf("beta's cursor moved to %d by a claim in alpha", got)
	}
	if got := queryInt64(t, beta, `select count(*) from docket_runs where claim_token is not null`); got != 0 {
		t.Fatalf("a claim in alpha claimed %d runs of beta", got)
	}
}

// migURLWithSearchPath returns databaseURL with its search_path set.
func migURLWithSearchPath(t testing.TB, databaseURL, schema string) string {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatalf("parse %s: %v", databaseURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func TestMigrationFailedUpgradeLeavesV1Intact(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, url, docket.MigrateOptions{Target: migV1Version})
	pool := poolFor(t, url)
	migInsertRuns(t, pool, migRun{"r1", "t1", "claimed"}, migRun{"r2", "t1", "ready"}, migRun{"r3", "", "done"})
	// The claim function comes after every table, trigger and backfill of V2;
	// an object already holding its fixed identity makes V2 fail there.
	execSQL(t, pool, `create function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean)
		returns void language sql as ''`)
	before := migCatalog(t, pool, "public")
	const runsSnapshot = `select string_agg(row(r.*)::text, ';' order by id) from docket_runs r`
	var runsBefore string
	if err := pool.QueryRow(testContext(t), runsSnapshot).Scan(&runsBefore); err != nil {
		t.Fatal(err)
	}

	err := docket.Migrate(testContext(t), url, docket.MigrateOptions{})
	if err == nil {
		t.Fatal("V2 applied over a conflicting docket_tenant_fair_claim")
	}
	if !strings.Contains(err.Error(), "docket_tenant_fair_claim") {
		t.Fatalf("V2 failed elsewhere than at the claim function: %v", err)
	}

	migExpectApplied(t, url, docket.MigrateOptions{}, migV1Version)
	migExpectSameCatalog(t, "after the failed upgrade", migCatalog(t, pool, "public"), before)
	var runsAfter string
	if err := pool.QueryRow(testContext(t), runsSnapshot).Scan(&runsAfter); err != nil {
		t.Fatal(err)
	}
	if runsAfter != runsBefore {
		t.Fatalf("runs changed by a failed upgrade:\nbefore %s\nafter  %s", runsBefore, runsAfter)
	}

	// Removing the conflict lets the same upgrade succeed.
	execSQL(t, pool, `drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean)`)
	migrateOrFail(t, url, docket.MigrateOptions{})
	migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions...)
	if got := queryInt64(t, pool, `select count(*) from docket_runs where tenant_admitted_at = claimed_at`); got != 1 {
		t.Fatalf("marked runs after the retried upgrade = %d, want 1", got)
	}
}

func TestMigrationConcurrentFirstPartitionCreation(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := testContext(t)
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
	migTxInsertRun(t, first, "c1", "newcomer")
	var secondPID uint32
	if err := second.QueryRow(ctx, "select pg_backend_pid()").Scan(&secondPID); err != nil {
		t.Fatal(err)
	}

	// The second insert must wait for the first transaction's partition.
	done := make(chan error, 1)
	go func() {
		_, err := second.Exec(ctx, migInsertRunSQL, "c2", "newcomer")
		done <- err
	}()
	migAwaitLockWait(t, pool, secondPID)
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second insert: %v", err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryInt64(t, pool, `select count(*) from docket_claim_partitions where scope_key = 'newcomer'`); got != 1 {
		t.Fatalf("partitions of newcomer = %d, want 1", got)
	}
	if got := queryInt64(t, pool, `select unfinished_count from docket_claim_schedule where scope_key = 'newcomer'`); got != 2 {
		t.Fatalf("unfinished_count of newcomer = %d, want 2", got)
	}
}

func TestMigrationRolledBackFirstRunLeavesNoPartition(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	ctx := testContext(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	migTxInsertRun(t, tx, "ghost-1", "ghost")
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := queryInt64(t, pool, `select (select count(*) from docket_claim_partitions where scope_key = 'ghost')
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
	migTxInsertRun(t, first, "ghost-2", "ghost")
	var secondPID uint32
	if err := second.QueryRow(ctx, "select pg_backend_pid()").Scan(&secondPID); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := second.Exec(ctx, migInsertRunSQL, "ghost-3", "ghost")
		done <- err
	}()
	migAwaitLockWait(t, pool, secondPID)
	if err := first.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("second insert: %v", err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := migSchedule(t, pool); len(got) != 1 || got[0].scope != "ghost" || got[0].unfinished != 1 {
		t.Fatalf("schedule = %+v, want one ghost row counting 1", got)
	}
}

// migInsertRunSQL inserts one ready run of a tenant.
const migInsertRunSQL = `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
	values ($1, $2, 'g', 'h1', '{}', 'running', now())`

func migTxInsertRun(t testing.TB, tx pgx.Tx, runID, tenant string) {
	t.Helper()
	if _, err := tx.Exec(testContext(t), migInsertRunSQL, runID, tenant); err != nil {
		t.Fatalf("insert %s: %v", runID, err)
	}
}

// migAwaitLockWait returns once backend pid waits on a lock. It polls the
// server's own view of the session, so it asserts nothing about time.
func migAwaitLockWait(t testing.TB, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	ctx := testContext(t)
	for {
		var waiting bool
		err := pool.QueryRow(ctx, `select coalesce(wait_event_type = 'Lock', false) from pg_stat_activity where pid = $1`, pid).Scan(&waiting)
		if err != nil {
			t.Fatalf("waiting for backend %d to block: %v", pid, err)
		}
		if waiting {
			return
		}
		if _, err := pool.Exec(ctx, "select pg_sleep(0.01)"); err != nil {
			t.Fatalf("waiting for backend %d to block: %v", pid, err)
		}
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
	migrateOrFail(t, url, docket.MigrateOptions{Target: migV2Version})
	pool := poolFor(t, url)
	migInsertRuns(t, pool,
		migRun{"a-future", "alpha", "future"},
		migRun{"b-waiting", "beta", "waiting"},
		migRun{"c-ready", "gamma", "ready"},
		migRun{"c-claimed", "gamma", "claimed"},
	)
	execSQL(t, pool, `update docket_claim_policy set admission_mode = 'tenant_fair', max_active = 3,
		configured_max_active = 3, policy_version = 1, initialized_at = now()`)
	// The runs are compared without V4's and V6's columns, which the
	// upgrade adds with their empty values (checked below).
	const snapshot = `select (select string_agg((to_jsonb(r) - 'attempt' - 'errors' - 'trace_context')::text, ';' order by id) from docket_runs r)
		|| (select string_agg(row(s.scope_key, s.ring_position, s.unfinished_count, s.updated_at)::text, ';' order by ring_position)
		      from docket_claim_schedule s)
		|| (select row(p.admission_mode, p.max_active, p.configured_max_active, p.policy_version, p.scan_ring_position,
		              p.updated_at)::text from docket_claim_policy p)`
	var before string
	if err := pool.QueryRow(testContext(t), snapshot).Scan(&before); err != nil {
		t.Fatal(err)
	}

	migrateOrFail(t, url, docket.MigrateOptions{})
	migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions...)
	var after string
	if err := pool.QueryRow(testContext(t), snapshot).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the upgrade changed existing rows:\nbefore %s\nafter  %s", before, after)
	}
	if n := queryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 0 {
		t.Fatalf("%d partitions parked by the upgrade", n)
	}
	if n := queryInt64(t, pool, `select count(*) from docket_runs where trace_context is not null`); n != 0 {
		t.Fatalf("%d existing runs got a trace context from the upgrade", n)
	}
	if n := queryInt64(t, pool, `select count(*) from docket_runs where attempt = 0 and errors = '[]'`); n != 4 {
		t.Fatalf("%d of 4 runs start V4 with no attempts and no errors", n)
	}
	if n := queryInt64(t, pool, `select count(*) from docket_claim_policy where not park_dormant and not configured_park_dormant`); n != 1 {
		t.Fatal("the upgrade did not leave parking off")
	}

	client := openClient(t, pool, tenantFairConfig(3))
	if err := pool.QueryRow(testContext(t), snapshot).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the first start after the upgrade wrote:\nbefore %s\nafter  %s", before, after)
	}
	tr, err := client.TraceClaimDue(testContext(t), docket.ClaimRequest{Now: time.Now(), Limit: 1, OrphanTTL: time.Hour,
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
	if n := queryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 0 {
		t.Fatalf("%d partitions parked in full-ring mode", n)
	}
}
