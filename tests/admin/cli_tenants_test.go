package admin

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The tenants table's header and the seeded scopes' rows (cap 4 by default,
// beta overridden to 1 and holding two admissions: one claimed, one ready).
const (
	tenantsHeader = "SCOPE        CAP  SOURCE    ADMITTED  CLAIMED  READY  QUEUED  DEBT  UNFINISHED  EPOCH  PARKED                      PAUSED"
	tenantsNone   = "tenantless   4    default   0         0        0      0       0     0           0      no                          no"
	tenantsAcme   = "tenant:acme  4    default   0         0        0      1       0     2           0      no                          no"
	tenantsBeta   = "tenant:beta  1    override  2         1        1      0       1     3           5      until 2031-01-02T03:04:05Z  no"
)

// tenantsSeed seeds the listing domain under TenantFair at cap 4 and gives
// beta an override, admissions over it, an epoch and a parked partition.
func tenantsSeed(t *testing.T) (string, func() string) {
	t.Helper()
	_, url, state := tenantsSeedPool(t)
	return url, state
}

// tenantsSeedPool is tenantsSeed that also returns the domain's pool.
func tenantsSeedPool(t *testing.T) (*pgxpool.Pool, string, func() string) {
	t.Helper()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4}})
	url := seed(t, pool)
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at, tenant_admitted_at)
		values ('r6', 'beta', 'g1', 'h1', '{}', 'running', now() - interval '1 minute', now())`)
	testkit.ExecSQL(t, pool, `update docket_runs set tenant_admitted_at = now() where run_id = 'r3'`)
	testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-override", "beta", "1", "--database-url", url)
	testkit.ExecSQL(t, pool, `update docket_claim_partitions set admission_epoch = 5 where scope_key = 'beta'`)
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = '2031-01-02T03:04:05Z' where scope_key = 'beta'`)
	return pool, url, func() string { return admState(t, pool) }
}

// "docket tenants list" shows every partition in scope key order with its
// effective cap, source and admission counts, a page at a time.
func TestCLITenantsList(t *testing.T) {
	t.Parallel()
	url, _ := tenantsSeed(t)
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--database-url", url)
	wantLines(t, "tenants list", r.Stdout, tenantsHeader, tenantsNone, tenantsAcme, tenantsBeta)

	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--limit", "2", "--database-url", url)
	wantLines(t, "tenants page 1", r.Stdout, tenantsHeader, tenantsNone, tenantsAcme, "next: tenant:acme")
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--limit", "2", "--after", nextCursor(t, r.Stdout), "--database-url", url)
	wantLines(t, "tenants page 2", r.Stdout, tenantsHeader, tenantsBeta)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--after", "tenantless", "--limit", "1", "--database-url", url)
	wantLines(t, "tenants after tenantless", r.Stdout, tenantsHeader, tenantsAcme, "next: tenant:acme")

	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--json", "--limit", "2", "--after", "tenantless", "--database-url", url)
	lines := cliLines(r.Stdout)
	if len(lines) != 2 {
		t.Fatalf("tenants list --json printed %q", r.Stdout)
	}
	var beta map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &beta); err != nil {
		t.Fatalf("%q: %v", lines[1], err)
	}
	want := map[string]any{
		"scope": "tenant:beta", "effective_max_active_runs": 1.0, "source": "override", "admitted": 2.0,
		"admitted_claimed": 1.0, "admitted_ready": 1.0, "queued": 0.0, "debt": 1.0, "unfinished": 3.0,
		"admission_epoch": 5.0, "parked": true, "parked_until": "2031-01-02T03:04:05Z", "paused": false,
	}
	if len(beta) != len(want) {
		t.Fatalf("beta as JSON = %v, want %v", beta, want)
	}
	for key, v := range want {
		if beta[key] != v {
			t.Errorf("beta as JSON %s = %#v, want %#v", key, beta[key], v)
		}
	}
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--json", "--limit", "1", "--database-url", url)
	if lines := cliLines(r.Stdout); len(lines) != 2 || lines[1] != `{"next":"tenantless"}` {
		t.Fatalf("tenants list --json --limit 1 printed %q", r.Stdout)
	}
}

// "docket tenants show" prints exactly what "docket policy inspect" does.
func TestCLITenantsShow(t *testing.T) {
	t.Parallel()
	url, state := tenantsSeed(t)
	for _, scope := range [][]string{{"beta"}, {"acme"}, {"--tenantless"}, {"never-seen"}} {
		show := testkit.CLIExpect(t, testkit.ExitOK, "", append(append([]string{"tenants", "show"}, scope...), "--database-url", url)...)
		inspect := testkit.CLIExpect(t, testkit.ExitOK, "", append(append([]string{"policy", "inspect"}, scope...), "--database-url", url)...)
		if show.Stdout != inspect.Stdout {
			t.Fatalf("tenants show %v printed\n%s\npolicy inspect printed\n%s", scope, show.Stdout, inspect.Stdout)
		}
	}
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "show", "beta", "--database-url", url)
	for _, line := range []string{"scope: tenant:beta", "effective_max_active_runs: 1", "source: override", "admission_epoch: 5",
		"unfinished: 3", "parked: until 2031-01-02T03:04:05Z", "paused: no", "admitted_ready: 1", "admitted_claimed: 1", "debt: 1"} {
		if !strings.Contains(r.Stdout, line+"\n") {
			t.Fatalf("tenants show beta lacks %q:\n%s", line, r.Stdout)
		}
	}

	before := state()
	for _, args := range [][]string{
		{"tenants", "show"},
		{"tenants", "show", "a", "b"},
		{"tenants", "show", "--tenantless", "beta"},
		{"tenants", "show", "beta", "--json"},
		{"tenants", "show", "beta", "--limit", "3"},
		{"tenants", "show", "bad\ttenant"},
		{"tenants", "list", "--limit", "0"},
		{"tenants", "list", "--limit", "1001"},
		{"tenants", "list", "--after", ""},
		{"tenants", "list", "--after", "tenant:"},
		{"tenants", "list", "--tenantless"},
		{"tenants", "list", "beta"},
		{"tenants", "explode"},
		{"tenants"},
	} {
		testkit.CLIExpect(t, testkit.ExitUsage, "", append(args, "--database-url", url)...)
	}
	if after := state(); after != before {
		t.Fatalf("refused tenants commands changed the database:\nbefore %s\nafter  %s", before, after)
	}
}

// In a domain whose policy was never initialized a scope without an override
// has no effective cap: exit 1 with the hint policy prints.
func TestCLITenantsNotInitialized(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	for _, args := range [][]string{{"tenants", "list"}, {"tenants", "show", "acme"}} {
		r := testkit.CLIExpect(t, testkit.ExitFailure, "not initialized", append(args, "--database-url", url)...)
		if !strings.Contains(r.Stderr, "start the application once") || r.Stdout != "" {
			t.Fatalf("docket %v printed %q / %q", args, r.Stdout, r.Stderr)
		}
	}
}

// "docket tenants pause" and "resume" write the flag and move the partition
// version; a stale --expected-version exits 3 and changes nothing; the
// listing and show report the pause.
func TestCLITenantsPauseResume(t *testing.T) {
	t.Parallel()
	pool, url, state := tenantsSeedPool(t)
	partition := func() string {
		var paused bool
		var version int64
		if err := pool.QueryRow(testkit.Context(t), `select paused, partition_version from docket_claim_partitions where scope_key = 'acme'`).
			Scan(&paused, &version); err != nil {
			t.Fatalf("read acme: %v", err)
		}
		return fmt.Sprintf("paused=%v version=%d", paused, version)
	}
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "pause", "acme", "--expected-version", "0", "--database-url", url)
	wantLines(t, "tenants pause acme", r.Stdout, "scope: tenant:acme", "paused: yes", "partition_version: 1")
	if got := partition(); got != "paused=true version=1" {
		t.Fatalf("acme after pause: %s", got)
	}
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "list", "--database-url", url)
	wantLines(t, "tenants list with acme paused", r.Stdout, tenantsHeader, tenantsNone,
		strings.TrimSuffix(tenantsAcme, "no")+"yes", tenantsBeta)
	testkit.CLIExpect(t, testkit.ExitOK, "paused: yes\n", "tenants", "show", "acme", "--database-url", url)

	before := state()
	testkit.CLIExpect(t, testkit.ExitStale, "docket: tenants resume: stale version: expected 0, current 1\n",
		"tenants", "resume", "acme", "--expected-version", "0", "--database-url", url)
	if after := state(); after != before || partition() != "paused=true version=1" {
		t.Fatalf("stale resume changed the database: %s", partition())
	}
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "tenants", "resume", "acme", "--expected-version", "1", "--database-url", url)
	wantLines(t, "tenants resume acme", r.Stdout, "scope: tenant:acme", "paused: no", "partition_version: 2")
	if got := partition(); got != "paused=false version=2" {
		t.Fatalf("acme after resume: %s", got)
	}
	testkit.CLIExpect(t, testkit.ExitUsage, "--expected-version applies to pause and resume only",
		"tenants", "show", "acme", "--expected-version", "1", "--database-url", url)
}
