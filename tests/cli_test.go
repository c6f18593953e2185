package tests

import (
	"bytes"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/cli"
	"github.com/docketrun/docket-go/internal/pgtest"
)

// cliResult is one in-process run of the docket command.
type cliResult struct {
	code   int
	stdout string
	stderr string
}

// cliRun runs the docket command line in-process.
func cliRun(t testing.TB, args ...string) cliResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Run(testContext(t), args, &stdout, &stderr)
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// cliExpect runs args and requires the exit code and, when set, a fragment
// of stdout or stderr.
func cliExpect(t testing.TB, code int, fragment string, args ...string) cliResult {
	t.Helper()
	r := cliRun(t, args...)
	if r.code != code {
		t.Fatalf("docket %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	if fragment != "" && !strings.Contains(r.stdout+r.stderr, fragment) {
		t.Fatalf("docket %s: output lacks %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), fragment, r.stdout, r.stderr)
	}
	return r
}

func TestCLIMigrateUpCreatesEveryObject(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	cliExpect(t, cli.ExitOK, "", "migrate", "up", "--database-url", url)
	pool := poolFor(t, url)
	reference := poolFor(t, pgtest.NewDatabase(t))
	migExpectSameCatalog(t, "docket migrate up versus the migrated template",
		migCatalog(t, pool, "public"), migCatalog(t, reference, "public"))

	r := cliExpect(t, cli.ExitOK, "", "migrate", "status", "--database-url", url)
	want := "applied  20261101000001_docket_v1.sql\napplied  20261101000002_docket_v2.sql\napplied  20261201000003_docket_v3.sql\napplied  20261201000004_docket_v4.sql\n" +
		"applied  20261201000005_docket_v5.sql\napplied  20261201000006_docket_v6.sql\napplied  20261201000007_docket_v7.sql\n"
	if r.stdout != want {
		t.Fatalf("status after up:\n%s\nwant:\n%s", r.stdout, want)
	}
	cliExpect(t, cli.ExitOK, "", "migrate", "--database-url", url, "down")
	r = cliExpect(t, cli.ExitOK, "", "migrate", "status", "--database-url", url)
	if want := "applied  20261101000001_docket_v1.sql\napplied  20261101000002_docket_v2.sql\napplied  20261201000003_docket_v3.sql\napplied  20261201000004_docket_v4.sql\n" +
		"applied  20261201000005_docket_v5.sql\napplied  20261201000006_docket_v6.sql\npending  20261201000007_docket_v7.sql\n"; r.stdout != want {
		t.Fatalf("status after down:\n%s\nwant:\n%s", r.stdout, want)
	}
	cliExpect(t, cli.ExitOK, "", "migrate", "up", "--database-url", url)
	migExpectApplied(t, url, docket.MigrateOptions{}, migAllVersions...)
}

func TestCLIPolicyCommands(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	url := pool.Config().ConnString()

	// The policy commands never synchronize: reading leaves the
	// uninitialized row exactly as it was.
	before := startupReadPolicy(t, pool)
	cliExpect(t, cli.ExitOK, "initialized: false", "policy", "get", "--database-url", url)
	if after := startupReadPolicy(t, pool); after != before {
		t.Fatalf("policy get wrote the policy row: %+v -> %+v", before, after)
	}
	cliExpect(t, cli.ExitFailure, "not initialized", "policy", "set-default", "5", "--database-url", url)

	openClient(t, pool, tenantFairConfig(4))
	r := cliExpect(t, cli.ExitOK, "", "policy", "get", "--database-url", url)
	for _, line := range []string{"admission_mode: tenant_fair", "initialized: true", "default_max_active_runs: 4", "policy_version: 1"} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Fatalf("policy get lacks %q:\n%s", line, r.stdout)
		}
	}
	cliExpect(t, cli.ExitOK, "policy_version: 2", "policy", "set-default", "7", "--expected-version", "1", "--database-url", url)
	cliExpect(t, cli.ExitStale, "stale", "policy", "set-default", "8", "--expected-version", "1", "--database-url", url)
	if got := queryInt64(t, pool, `select max_active from docket_claim_policy`); got != 7 {
		t.Fatalf("default after a stale CLI write = %d, want 7", got)
	}

	cliExpect(t, cli.ExitOK, "partition_version: 1", "policy", "set-override", "acme", "3", "--expected-version", "0", "--database-url", url)
	cliExpect(t, cli.ExitStale, "stale", "policy", "set-override", "--database-url", url, "acme", "5", "--expected-version", "0")
	migInsertRuns(t, pool, migRun{"a1", "acme", "ready"}, migRun{"a2", "acme", "ready"})
	r = cliExpect(t, cli.ExitOK, "", "policy", "inspect", "acme", "--database-url", url)
	for _, line := range []string{"scope: tenant:acme", "effective_max_active_runs: 3", "source: override", "partition_version: 1", "unfinished: 2", "queued: 2", "debt: 0"} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Fatalf("policy inspect lacks %q:\n%s", line, r.stdout)
		}
	}
	cliExpect(t, cli.ExitOK, "override_max_active_runs: none", "policy", "reset-override", "acme", "--expected-version", "1", "--database-url", url)
	cliExpect(t, cli.ExitOK, "source: default", "policy", "inspect", "acme", "--database-url", url)
	cliExpect(t, cli.ExitOK, "scope: tenantless", "policy", "set-override", "--tenantless", "2", "--database-url", url)
	cliExpect(t, cli.ExitOK, "ring_position: ", "policy", "inspect", "--tenantless", "--database-url", url)

	// Parked partitions: a CAS write of the domain's walk, read back by get
	// and reported per scope by inspect.
	cliExpect(t, cli.ExitOK, "park_dormant: off", "policy", "get", "--database-url", url)
	cliExpect(t, cli.ExitStale, "stale", "policy", "set-park-dormant", "on", "--expected-version", "1", "--database-url", url)
	r = cliExpect(t, cli.ExitOK, "", "policy", "set-park-dormant", "on", "--expected-version", "2", "--database-url", url)
	for _, line := range []string{"park_dormant: on", "configured_park_dormant: off", "policy_version: 3", "default_max_active_runs: 7"} {
		if !strings.Contains(r.stdout, line+"\n") {
			t.Fatalf("policy set-park-dormant lacks %q:\n%s", line, r.stdout)
		}
	}
	cliExpect(t, cli.ExitOK, "parked: no", "policy", "inspect", "acme", "--database-url", url)
	execSQL(t, pool, `update docket_claim_schedule set parked_until = 'infinity' where scope_key = 'acme'`)
	cliExpect(t, cli.ExitOK, "parked: until a write", "policy", "inspect", "acme", "--database-url", url)
	execSQL(t, pool, `update docket_claim_schedule set parked_until = '2031-01-02T03:04:05Z' where scope_key = 'acme'`)
	cliExpect(t, cli.ExitOK, "parked: until 2031-01-02T03:04:05Z", "policy", "inspect", "acme", "--database-url", url)
	cliExpect(t, cli.ExitOK, "park_dormant: off", "policy", "set-park-dormant", "off", "--database-url", url)
	cliExpect(t, cli.ExitOK, "parked: no", "policy", "inspect", "acme", "--database-url", url)

	// Invalid input exits 2 and writes nothing.
	state := admState(t, pool)
	for _, args := range [][]string{
		{"policy", "set-default", "0"},
		{"policy", "set-default", "-1"},
		{"policy", "set-default", "2147483648"},
		{"policy", "set-default", "many"},
		{"policy", "set-override", "acme", "0"},
		{"policy", "set-override", "acme"},
		{"policy", "set-override", "", "3"},
		{"policy", "set-override", "bad\ttenant", "3"},
		{"policy", "reset-override"},
		{"policy", "get", "--expected-version", "1"},
		{"policy", "get", "--tenantless"},
		{"policy", "set-default", "3", "--expected-version", "x"},
		{"policy", "set-park-dormant"},
		{"policy", "set-park-dormant", "yes"},
		{"policy", "set-park-dormant", "on", "off"},
		{"policy", "set-park-dormant", "--tenantless", "on"},
		{"policy", "inspect", "a", "b"},
		{"policy", "explode"},
	} {
		cliExpect(t, cli.ExitUsage, "", append(args, "--database-url", url)...)
	}
	if after := admState(t, pool); after != state {
		t.Fatalf("refused CLI input changed the database:\nbefore %s\nafter  %s", state, after)
	}
}

func TestCLISchemaFlagAndEnvironment(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	t.Setenv("DOCKET_DATABASE_URL", url)
	cliExpect(t, cli.ExitOK, "", "migrate", "up", "--schema", "tenant_domain")
	migExpectApplied(t, url, docket.MigrateOptions{Schema: "tenant_domain"}, migAllVersions...)
	pool := poolFor(t, url)
	if got := queryInt64(t, pool, `select count(*) from pg_class where relnamespace = 'public'::regnamespace`); got != 0 {
		t.Fatalf("public holds %d relations after migrating another schema", got)
	}
	cliExpect(t, cli.ExitOK, "initialized: false", "policy", "get", "--schema", "tenant_domain")
	// The public schema of the same database is not a Docket domain.
	cliExpect(t, cli.ExitFailure, "schema mismatch", "policy", "get")
	cliExpect(t, cli.ExitUsage, "", "migrate", "up", "--schema", "bad-name")

	t.Setenv("DOCKET_DATABASE_URL", "")
	cliExpect(t, cli.ExitUsage, "DOCKET_DATABASE_URL", "migrate", "status")
	cliExpect(t, cli.ExitUsage, "DOCKET_DATABASE_URL", "policy", "get")
}

func TestCLIUsageAndFailures(t *testing.T) {
	t.Parallel()
	help := cliExpect(t, cli.ExitOK, "Exit codes:", "help")
	for _, fragment := range []string{"0  success", "1  runtime or database error", "2  usage error", "3  stale version", "docket migrate", "docket policy"} {
		if !strings.Contains(help.stdout, fragment) {
			t.Fatalf("help lacks %q:\n%s", fragment, help.stdout)
		}
	}
	cliExpect(t, cli.ExitOK, "docket migrate up|down|status", "migrate", "-h")
	cliExpect(t, cli.ExitUsage, "Usage:")
	cliExpect(t, cli.ExitUsage, "unknown command", "frobnicate")
	cliExpect(t, cli.ExitUsage, "want exactly one", "migrate", "--database-url", "postgres://unused")
	cliExpect(t, cli.ExitUsage, "unknown action", "migrate", "sideways", "--database-url", "postgres://unused")
	cliExpect(t, cli.ExitUsage, "flag provided but not defined", "migrate", "up", "--colour")
	cliExpect(t, cli.ExitUsage, "missing action", "policy")

	v1 := pgtest.NewEmptyDatabase(t)
	migrateOrFail(t, v1, docket.MigrateOptions{Target: migV1Version})
	cliExpect(t, cli.ExitFailure, "schema mismatch", "policy", "get", "--database-url", v1)
	cliExpect(t, cli.ExitFailure, "", "policy", "get", "--database-url", "postgres://docket@127.0.0.1:1/none?connect_timeout=5")
}
