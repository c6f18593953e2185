package migration

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amacneil/dbmate/v2/pkg/dbmate"
	_ "github.com/amacneil/dbmate/v2/pkg/driver/postgres"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// An app that runs dbmate for its own migrations writes Docket's into the
// same directory with `docket migrate sql --format dbmate --out DIR`; one
// dbmate run applies both, sharing dbmate's schema_migrations, and Docket
// opens on the result.
func TestOwnToolDbmateAppliesDocketWithTheAppsMigrations(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "sql", "--format", "dbmate", "--out", dir)
	var wrote string
	for _, name := range testkit.MigrationNames {
		wrote += "wrote " + filepath.Join(dir, name) + "\n"
	}
	if r.Stdout != wrote {
		t.Fatalf("migrate sql printed %q", r.Stdout)
	}
	testkit.CLIExpect(t, testkit.ExitFailure, "exists; nothing is overwritten", "migrate", "sql", "--format", "dbmate", "--out", dir)
	if err := os.WriteFile(filepath.Join(dir, "20250101000000_invoices.sql"), []byte(
		"-- migrate:up\ncreate table invoices (id bigint primary key, run_id text);\n-- migrate:down\ndrop table invoices;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	databaseURL := pgtest.NewEmptyDatabase(t)
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	mate := dbmate.New(u)
	mate.MigrationsDir = []string{dir}
	mate.AutoDumpSchema = false
	mate.Log = &strings.Builder{}
	if err := mate.Migrate(); err != nil {
		t.Fatalf("dbmate: %v", err)
	}
	pool := testkit.PoolFor(t, databaseURL)
	var versions string
	if err := pool.QueryRow(testkit.Context(t), `select string_agg(version, ',' order by version) from schema_migrations`).Scan(&versions); err != nil {
		t.Fatal(err)
	}
	if versions != "20250101000000,"+strings.Join(testkit.MigrationAllVersions, ",") {
		t.Fatalf("dbmate recorded %s", versions)
	}
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	if got := testkit.QueryInt64(t, pool, `select count(*) from pg_tables where tablename = 'docket_schema_migrations'`); got != 0 {
		t.Fatal("Docket created its ledger in a schema another tool migrates")
	}
}

// An app that applies SQL with psql pipes `docket migrate sql` (every up
// section, each in its own transaction) into it, with the schema on the
// connection's search_path, and Docket opens there.
func TestOwnToolPsqlAppliesThePlainSQL(t *testing.T) {
	t.Parallel()
	psql := findPsql(t)
	databaseURL := pgtest.NewEmptyDatabase(t)
	pool := testkit.PoolFor(t, databaseURL)
	testkit.ExecSQL(t, pool, `create schema docket`)
	script := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "sql").Stdout
	cmd := exec.CommandContext(testkit.Context(t), psql, "--no-psqlrc", "--quiet", "-v", "ON_ERROR_STOP=1", "-d", databaseURL)
	cmd.Env = append(os.Environ(), "PGOPTIONS=-c search_path=docket")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	testkit.OpenClient(t, testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, "docket")), testkit.TenantFairConfig(2))
	down := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "sql", "--down").Stdout
	// The down sections come newest first.
	newestDown := strings.TrimSuffix(testkit.MigrationNewestName, ".sql") + ".down.sql"
	if !strings.HasPrefix(down, "-- Docket migration "+newestDown+"\nbegin;\n") {
		t.Fatalf("down script starts %q", down[:min(len(down), 120)])
	}
}

// findPsql locates a psql binary: on PATH or beside a Debian server.
func findPsql(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/psql")
	if len(matches) == 0 {
		t.Fatal("psql is needed for this test: install PostgreSQL's client (Debian: postgresql-client)")
	}
	return matches[len(matches)-1]
}

// The Go form of `docket migrate sql` (Migrator.Files and Migrator.SQL):
// every format, and one section.
func TestMigratorFilesAndSQL(t *testing.T) {
	t.Parallel()
	// Each format's names, built from the embedded files' names (which
	// are dbmate's layout): one file per migration, or an up and a down.
	var plain, single []string
	for _, name := range testkit.MigrationNames {
		base := strings.TrimSuffix(name, ".sql")
		plain = append(plain, base+".up.sql", base+".down.sql")
		single = append(single, name)
	}
	want := map[docket.MigrationFormat][]string{
		docket.FormatPlain:         plain,
		docket.FormatGolangMigrate: plain,
		docket.FormatDbmate:        single,
		docket.FormatGoose:         single,
	}
	migrator := testkit.PoolMigrator(t, nil, docket.MigratorConfig{}) // no database: Files and SQL only
	if len(want) != len(docket.MigrationFormats) {
		t.Fatalf("formats %v, want the names of %d", docket.MigrationFormats, len(want))
	}
	for format, names := range want {
		files, err := migrator.Files(format)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range files {
			got = append(got, f.Name)
		}
		if strings.Join(got, " ") != strings.Join(names, " ") {
			t.Errorf("%s: files %v, want %v", format, got, names)
		}
	}
	goose, _ := migrator.Files(docket.FormatGoose)
	if !strings.HasPrefix(goose[0].SQL, "-- +goose Up\n-- +goose StatementBegin\n") || !strings.Contains(goose[0].SQL, "\n-- +goose Down\n") {
		t.Errorf("goose file:\n%s", goose[0].SQL[:200])
	}
	up, err := migrator.SQL(testkit.MigrationV2Version, docket.MigrateUp)
	if err != nil || !strings.Contains(up, "create table docket_claim_policy") || strings.Contains(up, "migrate:") {
		t.Fatalf("V2 up: %v", err)
	}
	if _, err := migrator.Files("flyway"); err == nil {
		t.Fatal("an unknown format was accepted")
	}
	if _, err := migrator.SQL("20991231000000", docket.MigrateUp); err == nil {
		t.Fatal("an unknown version was accepted")
	}
	testkit.CLIExpect(t, testkit.ExitUsage, "pass --version or --out", "migrate", "sql", "--format", "goose")
	testkit.CLIExpect(t, testkit.ExitUsage, "unknown migration", "migrate", "sql", "--version", "1")
	testkit.CLIExpect(t, testkit.ExitUsage, "exclude each other", "migrate", "sql", "--up", "--down")
}

// The embedded migrations are named VERSION_docket_vN.sql with N their
// position, as the labels the tests expect (testkit.MigrationLabel)
// assume, and the newest is the schema version the binary reports.
func TestEmbeddedMigrationsAreNamedInOrder(t *testing.T) {
	t.Parallel()
	testkit.MigrationExpectNaming(t)
	if version, err := docket.SchemaVersion(); err != nil || version != testkit.MigrationNewest {
		t.Fatalf("SchemaVersion() = %q, %v; want %s", version, err, testkit.MigrationNewest)
	}
}
