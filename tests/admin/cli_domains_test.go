package admin

import (
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// docket domains list prints every domain of the database, one schema a
// line; each is then addressed with --schema; its flags are checked before
// any connection.
func TestCLIDomainsList(t *testing.T) {
	t.Parallel()
	databaseURL := pgtest.NewEmptyDatabase(t)
	if r := testkit.CLIExpect(t, testkit.ExitOK, "", "domains", "list", "--database-url", databaseURL); r.Stdout != "" {
		t.Fatalf("domains list of an empty database printed %q", r.Stdout)
	}
	testkit.ExecSQL(t, testkit.PoolFor(t, databaseURL), `create schema app`)
	for _, schema := range []string{"reports", "email"} {
		testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--create", "--database-url", databaseURL, "--schema", schema)
	}
	if r := testkit.CLIExpect(t, testkit.ExitOK, "", "domains", "list", "--database-url", databaseURL); r.Stdout != "email\nreports\n" || r.Stderr != "" {
		t.Fatalf("domains list printed %q, %q", r.Stdout, r.Stderr)
	}
	for _, schema := range []string{"email", "reports"} {
		testkit.CLIExpect(t, testkit.ExitOK, "default_max_active_runs: none", "policy", "get", "--database-url", databaseURL, "--schema", schema)
	}
	testkit.CLIExpect(t, testkit.ExitUsage, "domains list: --schema does not apply", "domains", "list", "--database-url", databaseURL, "--schema", "email")
	testkit.CLIExpect(t, testkit.ExitUsage, "domains: want the action list", "domains")
	testkit.CLIExpect(t, testkit.ExitUsage, "console: --schema and --all-domains exclude each other", "console", "--all-domains", "--schema", "email",
		"--database-url", databaseURL)
	if r := testkit.CLIExpect(t, testkit.ExitOK, "", "domains", "--help"); r.Stdout != "docket domains list [--database-url URL]\n"+
		"  The Docket domains (queues) of the database, one schema per line in name\n"+
		"  order: each is a fairness domain of its own (ring, cursor, default cap and\n"+
		"  overrides) that every other command addresses with --schema NAME.\n" {
		t.Fatalf("domains --help printed %q", r.Stdout)
	}
}
