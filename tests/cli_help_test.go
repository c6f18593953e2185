package tests

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/cli"
	"github.com/docketrun/docket-go/internal/pgtest"
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
			r := cliExpect(t, cli.ExitOK, "", args...)
			if !strings.HasPrefix(r.stdout, head) || strings.Contains(r.stdout, "Exit codes:") || r.stderr != "" {
				t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.stdout, r.stderr)
			}
		}
	}
	for _, args := range [][]string{{"policy", "get", "--help"}, {"policy", "set-default", "-h"}, {"migrate", "up", "--help"}, {"migrate", "sql", "-h"}} {
		if r := cliExpect(t, cli.ExitOK, "", args...); r.stderr != "" || !strings.HasPrefix(r.stdout, usages[args[0]]) {
			t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.stdout, r.stderr)
		}
	}
	cliExpect(t, cli.ExitUsage, `help: unknown command "nope"`, "help", "nope")
	if r := cliRun(t, "policy", "inspect", "--database-url", "postgres://docket@127.0.0.1:1/none?connect_timeout=5", "--", "-h"); r.code == cli.ExitOK {
		t.Fatalf("a tenant named -h after -- was taken for a help flag: %+v", r)
	}
}

// Errors carry one "docket: " prefix, and the policy commands right after
// migrate up either work or say what to run first.
func TestCLIErrorsAfterMigrateUp(t *testing.T) {
	t.Parallel()
	v1 := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, v1, docket.MigrateOptions{Target: migV1Version})
	r := cliExpect(t, cli.ExitFailure, "schema mismatch", "policy", "get", "--database-url", v1)
	if strings.Count(r.stderr, "docket: ") != 1 {
		t.Fatalf("doubled prefix: %q", r.stderr)
	}
	fresh := pgtest.NewEmptyDatabase(t)
	up := cliExpect(t, cli.ExitOK, "", "migrate", "up", "--database-url", fresh)
	if !strings.Contains(up.stdout, "applied 20261101000001_docket_v1.sql in schema public") {
		t.Fatalf("migrate up printed %q", up.stdout)
	}
	again := cliExpect(t, cli.ExitOK, "", "migrate", "up", "--database-url", fresh)
	if !strings.Contains(again.stdout, "nothing to apply") {
		t.Fatalf("a second migrate up printed %q", again.stdout)
	}
	set := cliExpect(t, cli.ExitFailure, "", "policy", "set-default", "5", "--database-url", fresh)
	if !strings.HasPrefix(set.stderr, "docket: policy set-default: claim policy not initialized") ||
		!strings.Contains(set.stderr, "start the application once, then change it here") {
		t.Fatalf("set-default before the first TenantFair start printed %q", set.stderr)
	}
	openClient(t, poolFor(t, fresh), tenantFairConfig(3))
	cliExpect(t, cli.ExitOK, "", "policy", "set-default", "5", "--database-url", fresh)
	cliExpect(t, cli.ExitOK, "default_max_active_runs: 5", "policy", "get", "--database-url", fresh)
}
