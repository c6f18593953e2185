package usage

import (
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// demoRun runs "docket demo" with args.
func demoRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	r := testkit.CLIRun(t, append([]string{"demo"}, args...)...)
	return r.Code, r.Stdout, r.Stderr
}

func TestDemoDrainsBothEnginesAndDropsItsSchemas(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	code, stdout, stderr := demoRun(t, "--database-url", url,
		"--hot-runs", "100", "--light-tenants", "5", "--light-runs", "4", "--handler-time", "1ms")
	if code != testkit.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, fragment := range []string{
		"== Legacy (tenant mode none) ==",
		"== TenantFair (tenant mode required, cap 4) ==",
		"drained 120 runs in",
		"Results (wait = first handler start - insert time)",
		"light p95 wait / drain time",
		"hot runs started before the last light run (of 100)",
		`InspectClaimPolicy(tenant "hot")`,
	} {
		if !strings.Contains(stdout, fragment) {
			t.Errorf("output lacks %q\n%s", fragment, stdout)
		}
	}
	// Every run was handled exactly once under each engine.
	if !regexp.MustCompile(`handler invocations \(runs: 120\)\s+120\s+120\n`).MatchString(stdout) {
		t.Errorf("handler invocations row is not 120 under both engines\n%s", stdout)
	}
	// Legacy has no admission state to show, and says so without an error.
	if !strings.Contains(stdout, "  legacy:\n    no cap and no admission state: the tenant-blind engine keeps none") {
		t.Errorf("Legacy's inspection line is not the no-state line\n%s", stdout)
	}
	// TenantFair finished the hot tenant: nothing admitted or unfinished.
	if !strings.Contains(stdout, "after the drain: mode tenant_fair, cap 4 (default), admitted 0 (claimed 0, ready 0), queued 0, debt 0, unfinished 0") {
		t.Errorf("TenantFair's after-drain inspection is not empty\n%s", stdout)
	}
	pool := testkit.PoolFor(t, url)
	if n := testkit.QueryInt64(t, pool, `select count(*) from information_schema.schemata where schema_name like 'docket\_demo\_%'`); n != 0 {
		t.Fatalf("%d demo schemas left behind", n)
	}
}

func TestDemoRefusesBadArgumentsBeforeStartingAnything(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--cap", "0"},
		{"--concurrency", "0"},
		{"--hot-runs", "0"},
		{"extra"},
		{"--no-such-flag"},
	} {
		code, stdout, stderr := demoRun(t, args...)
		if code != testkit.ExitUsage || stdout != "" || !strings.Contains(stderr, "docket demo [--database-url URL]") {
			t.Errorf("demo %v: exit %d, stdout %q, stderr %q; want usage error 2 before any output", args, code, stdout, stderr)
		}
	}
}
