package testkit

import (
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/docket"
)

// Released migration versions (release 0.1.0); a released migration never
// changes.
const (
	MigrationV1Version = "20261101000001"
	MigrationV2Version = "20261101000002"
)

// MigrationNames are the file names of the migrations the binary embeds
// (db/schema), oldest first: versions share one width, so name order is
// version order. A test that means "every version" or "the newest" reads
// them here, so a new migration needs no edit of the tests.
var MigrationNames = embeddedMigrationNames()

// MigrationAllVersions are every embedded migration's version, oldest first.
var MigrationAllVersions = migrationVersions(MigrationNames)

// MigrationNewest is the version of the newest embedded migration: the
// version Open requires and `docket migrate up` ends at.
var MigrationNewest = MigrationAllVersions[len(MigrationAllVersions)-1]

// MigrationNewestName is the file name of the newest embedded migration.
var MigrationNewestName = MigrationNames[len(MigrationNames)-1]

// MigrationNewestLabel is the short name Docket's messages give the newest
// migration, e.g. "V8".
var MigrationNewestLabel = MigrationLabel(len(MigrationNames))

// MigrationLabel is the short name of the nth migration (1 is the oldest),
// "V3" for 3: the nth file is named VERSION_docket_vN.sql.
func MigrationLabel(n int) string {
	return fmt.Sprintf("V%d", n)
}

// embeddedMigrationNames lists the embedded migration files. Go refuses to
// build a //go:embed pattern that matches nothing, so the list is never
// empty, and a constant pattern is never malformed.
func embeddedMigrationNames() []string {
	paths, _ := fs.Glob(db.Migrations, path.Join(db.MigrationsDir, "*.sql"))
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = path.Base(p)
	}
	return names
}

// migrationVersions are the versions that prefix names.
func migrationVersions(names []string) []string {
	versions := make([]string, len(names))
	for i, name := range names {
		versions[i], _, _ = strings.Cut(name, "_")
	}
	return versions
}

// MigrationExpectNaming fails unless every embedded migration is named
// VERSION_docket_vN.sql with N its position, as MigrationLabel assumes.
func MigrationExpectNaming(t testing.TB) {
	t.Helper()
	for i, name := range MigrationNames {
		if want := fmt.Sprintf("%s_docket_v%d.sql", MigrationAllVersions[i], i+1); name != want {
			t.Fatalf("embedded migration %d is named %s, want %s", i+1, name, want)
		}
	}
}

// MigrationCatalogQuery lists every object of one schema with its full definition:
// relations (tables, sequences, indexes), columns, constraints, indexes,
// functions (with a hash of their source) and user triggers. Two schemas
// with equal listings have the same shape.
const MigrationCatalogQuery = `
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

// MigrationCatalog returns the sorted object listing of schema.
func MigrationCatalog(t testing.TB, pool *pgxpool.Pool, schema string) []string {
	t.Helper()
	rows, err := pool.Query(Context(t), MigrationCatalogQuery, schema)
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

// MigrationExpectSameCatalog fails with the differing entries when got != want.
func MigrationExpectSameCatalog(t testing.TB, what string, got, want []string) {
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

// MigrateCall is one Migrator call as a test states it: the schema (empty:
// the URL's search_path), the direction and the target version.
type MigrateCall struct {
	Schema    string
	Direction docket.MigrateDirection
	Target    string
}

// Migrator is a docket.Migrator over its own connection to databaseURL in
// the schema of c, or fails the test.
func (c MigrateCall) Migrator(t testing.TB, databaseURL string) *docket.Migrator {
	t.Helper()
	m, err := docket.NewMigratorURL(databaseURL, docket.MigratorConfig{Schema: c.Schema})
	if err != nil {
		t.Fatalf("new migrator %+v: %v", c, err)
	}
	return m
}

// MigrateOrFail runs the migration c describes and fails the test on error.
func MigrateOrFail(t testing.TB, databaseURL string, c MigrateCall) {
	t.Helper()
	if err := c.Migrator(t, databaseURL).Migrate(Context(t), c.Direction, docket.MigrateOptions{Target: c.Target}); err != nil {
		t.Fatalf("migrate %+v: %v", c, err)
	}
}

// MigrationAppliedVersions lists the versions Migrator.Status reports as
// applied in the schema of c, up to its target.
func MigrationAppliedVersions(t testing.TB, databaseURL string, c MigrateCall) []string {
	t.Helper()
	statuses, err := c.Migrator(t, databaseURL).Status(Context(t), docket.MigrateOptions{Target: c.Target})
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

// MigrationExpectApplied fails unless exactly want is applied.
func MigrationExpectApplied(t testing.TB, databaseURL string, c MigrateCall, want ...string) {
	t.Helper()
	if got := MigrationAppliedVersions(t, databaseURL, c); !slices.Equal(got, want) {
		t.Fatalf("applied migrations = %v, want %v", got, want)
	}
}

// MigrationRun is one run seeded with plain SQL in a given lifecycle shape.
type MigrationRun struct {
	RunID  string
	Tenant string // "" is tenantless
	Shape  string // a key of MigrationRunShapes
}

// MigrationRunShapes are V1 column values (status, wake_at, claim_token,
// claimed_at, poisoned_at, poison_reason, finished_at) satisfying every row
// check. Times are relative to the statement so rows keep their meaning.
var MigrationRunShapes = map[string]string{
	"ready":     `'running', now() - interval '1 minute', null, null, null, null, null`,
	"future":    `'running', now() + interval '1 hour', null, null, null, null, null`,
	"claimed":   `'running', null, gen_random_uuid(), now() - interval '10 seconds', null, null, null`,
	"waiting":   `'waiting', null, null, null, null, null, null`,
	"poisoned":  `'running', null, null, null, now() - interval '5 seconds', 'max_claim_attempts_exceeded', null`,
	"done":      `'done', null, null, null, null, null, now()`,
	"failed":    `'failed', null, null, null, null, null, now()`,
	"cancelled": `'cancelled', null, null, null, null, null, now()`,
}

// MigrationInsertRuns inserts runs one statement each, in order, with plain SQL
// that works on V1 and V2 alike.
func MigrationInsertRuns(t testing.TB, pool *pgxpool.Pool, runs ...MigrationRun) {
	t.Helper()
	for _, r := range runs {
		values, ok := MigrationRunShapes[r.Shape]
		if !ok {
			t.Fatalf("unknown run shape %q", r.Shape)
		}
		var tenant *string
		if r.Tenant != "" {
			tenant = &r.Tenant
		}
		ExecSQL(t, pool, `insert into docket_runs
			(run_id, tenant_id, graph_id, graph_hash, state,
			 status, wake_at, claim_token, claimed_at, poisoned_at, poison_reason, finished_at)
			values ($1, $2, 'g', 'h1', '{}', `+values+`)`, r.RunID, tenant)
	}
}

// MigrationScheduleRow is one ring row joined with its partition.
type MigrationScheduleRow struct {
	Scope      string
	Position   int64
	Unfinished int64
}

// MigrationSchedule lists the ring rows in position order.
func MigrationSchedule(t testing.TB, pool *pgxpool.Pool) []MigrationScheduleRow {
	t.Helper()
	rows, err := pool.Query(Context(t), `select s.scope_key, s.ring_position, s.unfinished_count
		from docket_claim_schedule s join docket_claim_partitions p using (scope_key)
		order by s.ring_position`)
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MigrationScheduleRow, error) {
		var s MigrationScheduleRow
		return s, r.Scan(&s.Scope, &s.Position, &s.Unfinished)
	})
	if err != nil {
		t.Fatalf("schedule: %v", err)
	}
	return out
}

// MigrationURLWithSearchPath returns databaseURL with its search_path set.
func MigrationURLWithSearchPath(t testing.TB, databaseURL, schema string) string {
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

// MigrationAwaitLockWait returns once backend pid waits on a lock. It polls the
// server's own view of the session, so it asserts nothing about time.
func MigrationAwaitLockWait(t testing.TB, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	ctx := Context(t)
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

// URLMigrator is docket.NewMigratorURL(databaseURL, config), or fails the
// test.
func URLMigrator(t testing.TB, databaseURL string, config docket.MigratorConfig) *docket.Migrator {
	t.Helper()
	m, err := docket.NewMigratorURL(databaseURL, config)
	if err != nil {
		t.Fatalf("NewMigratorURL %+v: %v", config, err)
	}
	return m
}

// PoolMigrator is docket.NewMigrator(pool, config), or fails the test.
func PoolMigrator(t testing.TB, pool *pgxpool.Pool, config docket.MigratorConfig) *docket.Migrator {
	t.Helper()
	m, err := docket.NewMigrator(pool, config)
	if err != nil {
		t.Fatalf("NewMigrator %+v: %v", config, err)
	}
	return m
}
