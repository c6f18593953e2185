package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// cliExpectExact runs args and requires the exit code, stdout and stderr
// exactly.
func cliExpectExact(t *testing.T, code int, stdout, stderr string, args ...string) {
	t.Helper()
	r := testkit.CLIRun(t, args...)
	if r.Code != code || r.Stdout != stdout || r.Stderr != stderr {
		t.Fatalf("docket %s: exit %d, want %d\nstdout: %q\nwant:   %q\nstderr: %q\nwant:   %q",
			strings.Join(args, " "), r.Code, code, r.Stdout, stdout, r.Stderr, stderr)
	}
}

// "docket migrate up" installs Docket only with --create: a schema that does
// not exist, or holds no Docket migration, is refused with exit 2 naming the
// flag, and nothing is created; status and down refuse such a schema with
// exit 1, creating nothing either. With --create the first install
// applies every migration; later ups, with or without it, upgrade.
func TestCLIMigrateUpAsksForCreate(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	pool := testkit.PoolFor(t, url)
	empty := testkit.Catalog(t, pool)
	unchanged := func(what string) {
		t.Helper()
		if got := testkit.Catalog(t, pool); got != empty {
			t.Fatalf("%s changed the catalog: %s, was %s", what, got, empty)
		}
	}

	cliExpectExact(t, testkit.ExitUsage, "",
		"docket: migrate up: Docket not installed: schema typo does not exist; nothing was changed: pass --create to install Docket there as a new domain (`docket migrate up --create --schema typo`), or check --schema and $DOCKET_SCHEMA\n",
		"migrate", "up", "--schema", "typo", "--database-url", url)
	unchanged("migrate up of a missing schema")
	cliExpectExact(t, testkit.ExitUsage, "",
		"docket: migrate up: Docket not installed: no Docket migration is applied in schema public; nothing was changed: pass --create to install Docket there as a new domain (`docket migrate up --create`), or check --schema and $DOCKET_SCHEMA\n",
		"migrate", "up", "--database-url", url)
	unchanged("migrate up of an empty public schema")
	cliExpectExact(t, testkit.ExitFailure, "",
		"docket: migrate status: Docket not installed: schema typo does not exist; `docket migrate up --create --schema typo` installs Docket there\n",
		"migrate", "status", "--schema", "typo", "--database-url", url)
	cliExpectExact(t, testkit.ExitFailure, "",
		"docket: migrate status: Docket not installed: no Docket migration is applied in schema public; `docket migrate up --create` installs Docket there\n",
		"migrate", "status", "--database-url", url)
	cliExpectExact(t, testkit.ExitFailure, "",
		"docket: migrate down: Docket not installed: schema typo does not exist; nothing to roll back\n",
		"migrate", "down", "--schema", "typo", "--database-url", url)
	unchanged("migrate status and down")
	// DOCKET_SCHEMA names the schema as --schema does, in the hint too.
	r := testkit.CLIRunEnv(t, []string{"DOCKET_SCHEMA=typo"}, "migrate", "up", "--database-url", url)
	if r.Code != testkit.ExitUsage || !strings.Contains(r.Stderr, "(`docket migrate up --create --schema typo`)") {
		t.Fatalf("migrate up with DOCKET_SCHEMA: exit %d, stderr %q", r.Code, r.Stderr)
	}
	unchanged("migrate up with DOCKET_SCHEMA")
	for _, action := range []string{"down", "status", "adopt"} {
		testkit.CLIExpect(t, testkit.ExitUsage, "migrate "+action+": --create applies to migrate up only", "migrate", action, "--create", "--database-url", url)
	}
	unchanged("--create with another action")

	up := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--create", "--schema", "typo", "--database-url", url)
	if strings.Count(up.Stdout, "applied ") != len(testkit.MigrationNames) {
		t.Fatalf("migrate up --create printed %q", up.Stdout)
	}
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{Schema: "typo"}, testkit.MigrationAllVersions...)
	nothing := "schema typo is up to date at " + testkit.MigrationNewest + ": nothing to apply\n"
	cliExpectExact(t, testkit.ExitOK, nothing, "", "migrate", "up", "--schema", "typo", "--database-url", url)
	cliExpectExact(t, testkit.ExitOK, nothing, "", "migrate", "up", "--create", "--schema", "typo", "--database-url", url)

	// A domain rolled back to nothing keeps only the ledger: no migration
	// is applied, so it is a new install again.
	for range testkit.MigrationNames {
		testkit.CLIExpect(t, testkit.ExitOK, "rolled back ", "migrate", "down", "--schema", "typo", "--database-url", url)
	}
	cliExpectExact(t, testkit.ExitFailure, "",
		"docket: migrate status: Docket not installed: no Docket migration is applied in schema typo; `docket migrate up --create --schema typo` installs Docket there\n",
		"migrate", "status", "--schema", "typo", "--database-url", url)
	rolledBack := testkit.Catalog(t, pool)
	testkit.CLIExpect(t, testkit.ExitUsage, "pass --create", "migrate", "up", "--schema", "typo", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitFailure, "nothing to roll back", "migrate", "down", "--schema", "typo", "--database-url", url)
	if got := testkit.Catalog(t, pool); got != rolledBack {
		t.Fatalf("refused commands changed the rolled-back schema: %s, was %s", got, rolledBack)
	}
}
