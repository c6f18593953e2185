package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// --help on each runs and tenants action with its own usage prints only
// that usage on stdout and exits 0, wherever the flag stands.
func TestCLIHelpOnRunsAndTenantsActions(t *testing.T) {
	t.Parallel()
	heads := map[string]string{
		"runs list":           "docket runs list [--tenant TENANT | --tenantless]",
		"runs show":           "docket runs show TENANT RUN_ID",
		"runs cancel":         "docket runs cancel TENANT RUN_ID",
		"runs resume":         "docket runs resume TENANT RUN_ID",
		"runs retry-poisoned": "docket runs retry-poisoned TENANT RUN_ID",
		"tenants list":        "docket tenants list [--limit N]",
		"tenants show":        "docket tenants show TENANT",
		"tenants pause":       "docket tenants pause TENANT",
		"tenants resume":      "docket tenants resume TENANT",
	}
	for action, head := range heads {
		words := strings.Fields(action)
		for _, args := range [][]string{
			append(words, "--help"),
			append(words, "-h"),
			append(words, "acme", "r1", "--json", "-help"),
		} {
			r := testkit.CLIExpect(t, testkit.ExitOK, "", args...)
			if !strings.HasPrefix(r.Stdout, head) || r.Stderr != "" || strings.Contains(r.Stdout, "Exit codes:") {
				t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
			}
			for other, otherHead := range heads {
				if other != action && strings.Contains(r.Stdout, otherHead) {
					t.Errorf("docket %s printed the usage of %s too:\n%s", strings.Join(args, " "), other, r.Stdout)
				}
			}
		}
	}
	for _, args := range [][]string{{"tenants", "--help"}, {"tenants", "-h"}, {"help", "tenants"}} {
		r := testkit.CLIExpect(t, testkit.ExitOK, "", args...)
		if !strings.HasPrefix(r.Stdout, "docket tenants <action>") || r.Stderr != "" || strings.Contains(r.Stdout, "Exit codes:") {
			t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
		}
	}
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "help")
	for _, line := range []string{
		"  tenants    list the domain's partitions, show, pause or resume one scope\n",
		"  schedules  list, add, pause, resume or remove schedules of periodic runs\n",
		"  list                    runs of every scope (or one), newest first, one page\n",
		"docket tenants <action>",
	} {
		if !strings.Contains(r.Stdout, line) {
			t.Errorf("docket help lacks %q:\n%s", line, r.Stdout)
		}
	}
	// A usage error of an action prints that action's usage.
	unreachable := "postgres://docket@127.0.0.1:1/none?connect_timeout=5"
	if r := testkit.CLIExpect(t, testkit.ExitUsage, "", "tenants", "list", "--nope", "--database-url", unreachable); !strings.Contains(r.Stderr, heads["tenants list"]) {
		t.Errorf("tenants list --nope printed %q", r.Stderr)
	}
}
