package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// --help on every command and action prints only that command's usage on
// stdout and exits 0; "docket help CMD" does the same; "--" makes a later
// "-h" a plain argument.
func TestCLIHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	usages := map[string]string{
		"migrate": "docket migrate up|down|status",
		"policy":  "docket policy <action>",
		"demo":    "docket demo",
		"version": "docket version",
	}
	for name, head := range usages {
		for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
			r := testkit.CLIExpect(t, testkit.ExitOK, "", args...)
			if !strings.HasPrefix(r.Stdout, head) || strings.Contains(r.Stdout, "Exit codes:") || r.Stderr != "" {
				t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
			}
		}
	}
	for _, args := range [][]string{{"policy", "get", "--help"}, {"policy", "set-default", "-h"}, {"migrate", "up", "--help"}, {"migrate", "sql", "-h"}} {
		if r := testkit.CLIExpect(t, testkit.ExitOK, "", args...); r.Stderr != "" || !strings.HasPrefix(r.Stdout, usages[args[0]]) {
			t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
		}
	}
	testkit.CLIExpect(t, testkit.ExitUsage, `help: unknown command "nope"`, "help", "nope")
	if r := testkit.CLIRun(t, "policy", "inspect", "--database-url", "postgres://docket@127.0.0.1:1/none?connect_timeout=5", "--", "-h"); r.Code == testkit.ExitOK {
		t.Fatalf("a tenant named -h after -- was taken for a help flag: %+v", r)
	}
}

// Errors carry one "docket: " prefix, and the policy commands right after
// migrate up either work or say what to run first.
func TestCLIErrorsAfterMigrateUp(t *testing.T) {
	t.Parallel()
	v1 := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, v1, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	r := testkit.CLIExpect(t, testkit.ExitFailure, "schema mismatch", "policy", "get", "--database-url", v1)
	if strings.Count(r.Stderr, "docket: ") != 1 {
		t.Fatalf("doubled prefix: %q", r.Stderr)
	}
	fresh := pgtest.NewEmptyDatabase(t)
	up := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--create", "--database-url", fresh)
	if !strings.Contains(up.Stdout, "applied 20261101000001_docket_v1.sql in schema public") {
		t.Fatalf("migrate up printed %q", up.Stdout)
	}
	again := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--database-url", fresh)
	if !strings.Contains(again.Stdout, "nothing to apply") {
		t.Fatalf("a second migrate up printed %q", again.Stdout)
	}
	set := testkit.CLIExpect(t, testkit.ExitFailure, "", "policy", "set-default", "5", "--database-url", fresh)
	if !strings.HasPrefix(set.Stderr, "docket: policy set-default: claim policy not initialized") ||
		!strings.Contains(set.Stderr, "start the application once, then change it here") {
		t.Fatalf("set-default before the first TenantFair start printed %q", set.Stderr)
	}
	testkit.OpenClient(t, testkit.PoolFor(t, fresh), testkit.TenantFairConfig(3))
	testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-default", "5", "--database-url", fresh)
	testkit.CLIExpect(t, testkit.ExitOK, "default_max_active_runs: 5", "policy", "get", "--database-url", fresh)
}
