package migration

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// keywordDSN turns a postgres URL into pgx's keyword/value form.
func keywordDSN(t *testing.T, databaseURL string) string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", cfg.Host, cfg.Port, cfg.User, cfg.Database)
}

// Migrations connect exactly as the rest of Docket does: a keyword/value
// DSN works, a URL without sslmode works on a server without SSL, and a
// wrong database name is reported as pgx reports it.
func TestMigrateTakesWhatPgxTakes(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	var log bytes.Buffer
	if err := testkit.URLMigrator(t, keywordDSN(t, databaseURL), docket.MigratorConfig{Log: &log}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatalf("migrate with a keyword/value DSN: %v", err)
	}
	want := "applied 20261101000001_docket_v1.sql in schema public ("
	if !strings.Contains(log.String(), want) || !strings.Contains(log.String(), "applied 20261101000002_docket_v2.sql in schema public (") {
		t.Fatalf("log %q lacks the applied migrations", log.String())
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
	log.Reset()
	if err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Log: &log}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := log.String(); got != "schema public is up to date at "+testkit.MigrationNewest+": nothing to apply\n" {
		t.Fatalf("second migrate logged %q", got)
	}
	testkit.OpenClient(t, testkit.PoolFor(t, databaseURL), testkit.TenantFairConfig(2))

	err := testkit.URLMigrator(t, pgtest.DatabaseURL(databaseURL, "docket_no_such_database"), docket.MigratorConfig{}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "3D000" || !strings.Contains(err.Error(), `database "docket_no_such_database" does not exist`) {
		t.Fatalf("migrate into a missing database: %v; want pgx's 3D000 error", err)
	}
}

// A Migrator over the application's own pool migrates into the
// named schema; the pool's own search_path (the app's tables first) is
// never changed, and Docket then opens on a pool that lists both schemas.
func TestMigratorOverAPoolKeepsTheAppsSearchPath(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	app := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, "app,public"))
	testkit.ExecSQL(t, app, `create schema app; create table app.invoices (id bigint primary key)`)
	if err := testkit.PoolMigrator(t, app, docket.MigratorConfig{Schema: "docket"}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatalf("migrate with the app's pool: %v", err)
	}
	for range 3 { // every connection the pool may hand out
		var searchPath string
		if err := app.QueryRow(testkit.Context(t), `show search_path`).Scan(&searchPath); err != nil {
			t.Fatal(err)
		}
		if searchPath != "app,public" {
			t.Fatalf("the app's search_path became %q", searchPath)
		}
	}
	if got := testkit.QueryInt64(t, app, `select count(*) from pg_tables where schemaname = 'docket' and tablename like 'docket\_%'`); got != 7 {
		t.Fatalf("schema docket holds %d Docket tables, want 7 (six and the ledger)", got)
	}
	if got := testkit.QueryInt64(t, app, `select count(*) from pg_tables where schemaname in ('app', 'public') and tablename like 'docket\_%'`); got != 0 {
		t.Fatalf("%d Docket tables landed in the app's schemas", got)
	}
	statuses, err := testkit.PoolMigrator(t, app, docket.MigratorConfig{Schema: "docket"}).Status(testkit.Context(t), docket.MigrateOptions{})
	if err != nil || len(statuses) != len(testkit.MigrationAllVersions) || slices.ContainsFunc(statuses, func(s docket.MigrationStatus) bool { return !s.Applied }) {
		t.Fatalf("status through the pool: %+v, %v", statuses, err)
	}
	testkit.OpenClient(t, testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, "docket,app,public")), testkit.TenantFairConfig(2))
}

// MigrateTx applies every migration inside the caller's transaction: a
// rollback leaves nothing, a commit leaves the whole schema, and the rest of
// the transaction keeps the caller's search_path.
func TestMigrateTxFollowsTheCallersTransaction(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	pool := testkit.PoolFor(t, databaseURL)
	for _, commit := range []bool{false, true} {
		tx, err := pool.Begin(testkit.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(testkit.Context(t), `set local search_path = public`); err != nil {
			t.Fatal(err)
		}
		migrator := testkit.PoolMigrator(t, nil, docket.MigratorConfig{Schema: "docket"})
		if err := migrator.MigrateTx(testkit.Context(t), tx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
			t.Fatalf("migrate in the transaction: %v", err)
		}
		var searchPath string
		if err := tx.QueryRow(testkit.Context(t), `show search_path`).Scan(&searchPath); err != nil || searchPath != "public" {
			t.Fatalf("search_path after MigrateTx = %q, %v; want public", searchPath, err)
		}
		if commit {
			err = tx.Commit(testkit.Context(t))
		} else {
			err = tx.Rollback(testkit.Context(t))
		}
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if commit {
			want = 1
		}
		if got := testkit.QueryInt64(t, pool, `select count(*) from pg_namespace where nspname = 'docket'`); got != want {
			t.Fatalf("commit=%v: %d docket schemas, want %d", commit, got, want)
		}
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{Schema: "docket"}, testkit.MigrationAllVersions...)
}

// A schema that an earlier release migrated recorded Docket's versions in
// dbmate's schema_migrations, possibly next to the app's own versions:
// Migrate adopts Docket's versions into its own ledger once, applies
// nothing again, and leaves the app's rows alone.
func TestMigrateAdoptsTheEarlierLedger(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	pool := testkit.PoolFor(t, databaseURL)
	testkit.ExecSQL(t, pool, `drop table docket_schema_migrations;
		create table schema_migrations (version varchar(128) primary key);
		insert into schema_migrations values ('20250101000000'), ('20261101000001')`)
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{}, testkit.MigrationV1Version)
	var log bytes.Buffer
	if err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Log: &log}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatalf("migrate over the earlier ledger: %v", err)
	}
	if !strings.Contains(log.String(), "recorded [20261101000001] from schema_migrations") ||
		!strings.Contains(log.String(), "applied 20261101000002_docket_v2.sql") || strings.Contains(log.String(), "applied 20261101000001") {
		t.Fatalf("log %q", log.String())
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from schema_migrations`); got != 2 {
		t.Fatalf("schema_migrations holds %d rows, want the 2 it had", got)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_schema_migrations`); got != int64(len(testkit.MigrationAllVersions)) {
		t.Fatalf("docket_schema_migrations holds %d rows, want %d", got, len(testkit.MigrationAllVersions))
	}
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
}

// Another tool's schema_migrations with another shape (golang-migrate keeps
// version bigint and dirty) in the same schema is no obstacle.
func TestMigrateIgnoresAnotherToolsLedger(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	pool := testkit.PoolFor(t, databaseURL)
	testkit.ExecSQL(t, pool, `create table schema_migrations (version bigint not null primary key, dirty boolean not null);
		insert into schema_migrations values (7, false)`)
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{})
	var rows string
	if err := pool.QueryRow(testkit.Context(t), `select string_agg(version::text || ':' || dirty::text, ',') from schema_migrations`).Scan(&rows); err != nil || rows != "7:false" {
		t.Fatalf("the other tool's ledger became %q (%v)", rows, err)
	}
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
}

// Deployments that start together each run Migrate; the schema lock makes
// every migration apply once.
func TestMigrateConcurrentMigratorsApplyOnce(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		migrator := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: "docket"})
		wg.Go(func() {
			errs[i] = migrator.Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrator %d: %v", i, err)
		}
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{Schema: "docket"}, testkit.MigrationAllVersions...)
}

// A ledger holding a version this binary does not know is a newer
// release's schema: Migrate refuses to touch it.
func TestMigrateRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewDatabase(t)
	pool := testkit.PoolFor(t, databaseURL)
	testkit.ExecSQL(t, pool, `insert into docket_schema_migrations (version) values ('20991231000000')`)
	for _, dir := range []docket.MigrateDirection{docket.MigrateUp, docket.MigrateDown} {
		err := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{}).Migrate(testkit.Context(t), dir, docket.MigrateOptions{})
		if !errors.Is(err, docket.ErrMigrationOrder) {
			t.Fatalf("direction %d over a newer schema: %v, want ErrMigrationOrder", dir, err)
		}
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_schema_migrations`); got != int64(len(testkit.MigrationAllVersions))+1 {
		t.Fatalf("ledger holds %d rows, want %d", got, len(testkit.MigrationAllVersions)+1)
	}
}
