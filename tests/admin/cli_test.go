package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestCLIMigrateUpCreatesEveryObject(t *testing.T) {
	t.Parallel()
	url := pgtest.NewEmptyDatabase(t)
	testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--create", "--database-url", url)
	pool := testkit.PoolFor(t, url)
	reference := testkit.PoolFor(t, pgtest.NewDatabase(t))
	testkit.MigrationExpectSameCatalog(t, "docket migrate up versus the migrated template",
		testkit.MigrationCatalog(t, pool, "public"), testkit.MigrationCatalog(t, reference, "public"))

	// One "STATE    NAME" line per embedded migration; down leaves only
	// the newest pending.
	var afterUp, afterDown strings.Builder
	for _, name := range testkit.MigrationNames {
		afterUp.WriteString("applied  " + name + "\n")
		if name == testkit.MigrationNewestName {
			afterDown.WriteString("pending  " + name + "\n")
		} else {
			afterDown.WriteString("applied  " + name + "\n")
		}
	}
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "status", "--database-url", url)
	if want := afterUp.String(); r.Stdout != want {
		t.Fatalf("status after up:\n%s\nwant:\n%s", r.Stdout, want)
	}
	testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "--database-url", url, "down")
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "status", "--database-url", url)
	if want := afterDown.String(); r.Stdout != want {
		t.Fatalf("status after down:\n%s\nwant:\n%s", r.Stdout, want)
	}
	testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--database-url", url)
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{}, testkit.MigrationAllVersions...)
}

func TestCLIPolicyCommands(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()

	// The policy commands never synchronize: reading leaves the
	// uninitialized row exactly as it was.
	before := testkit.StartupReadPolicy(t, pool)
	testkit.CLIExpect(t, testkit.ExitOK, "initialized: false", "policy", "get", "--database-url", url)
	if after := testkit.StartupReadPolicy(t, pool); after != before {
		t.Fatalf("policy get wrote the policy row: %+v -> %+v", before, after)
	}
	testkit.CLIExpect(t, testkit.ExitFailure, "not initialized", "policy", "set-default", "5", "--database-url", url)

	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "get", "--database-url", url)
	for _, line := range []string{"admission_mode: tenant_fair", "initialized: true", "default_max_active_runs: 4", "policy_version: 1"} {
		if !strings.Contains(r.Stdout, line+"\n") {
			t.Fatalf("policy get lacks %q:\n%s", line, r.Stdout)
		}
	}
	testkit.CLIExpect(t, testkit.ExitOK, "policy_version: 2", "policy", "set-default", "7", "--expected-version", "1", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitStale, "stale", "policy", "set-default", "8", "--expected-version", "1", "--database-url", url)
	if got := testkit.QueryInt64(t, pool, `select max_active from docket_claim_policy`); got != 7 {
		t.Fatalf("default after a stale CLI write = %d, want 7", got)
	}

	testkit.CLIExpect(t, testkit.ExitOK, "partition_version: 1", "policy", "set-override", "acme", "3", "--expected-version", "0", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitStale, "stale", "policy", "set-override", "--database-url", url, "acme", "5", "--expected-version", "0")
	testkit.MigrationInsertRuns(t, pool, testkit.MigrationRun{RunID: "a1", Tenant: "acme", Shape: "ready"}, testkit.MigrationRun{RunID: "a2", Tenant: "acme", Shape: "ready"})
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "inspect", "acme", "--database-url", url)
	for _, line := range []string{"scope: tenant:acme", "effective_max_active_runs: 3", "source: override", "partition_version: 1", "unfinished: 2", "queued: 2", "debt: 0"} {
		if !strings.Contains(r.Stdout, line+"\n") {
			t.Fatalf("policy inspect lacks %q:\n%s", line, r.Stdout)
		}
	}
	testkit.CLIExpect(t, testkit.ExitOK, "override_max_active_runs: none", "policy", "reset-override", "acme", "--expected-version", "1", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "source: default", "policy", "inspect", "acme", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "scope: tenantless", "policy", "set-override", "--tenantless", "2", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "ring_position: ", "policy", "inspect", "--tenantless", "--database-url", url)

	// Parked partitions: a CAS write of the domain's walk, read back by get
	// and reported per scope by inspect.
	testkit.CLIExpect(t, testkit.ExitOK, "park_dormant: off", "policy", "get", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitStale, "stale", "policy", "set-park-dormant", "on", "--expected-version", "1", "--database-url", url)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-park-dormant", "on", "--expected-version", "2", "--database-url", url)
	for _, line := range []string{"park_dormant: on", "configured_park_dormant: off", "policy_version: 3", "default_max_active_runs: 7"} {
		if !strings.Contains(r.Stdout, line+"\n") {
			t.Fatalf("policy set-park-dormant lacks %q:\n%s", line, r.Stdout)
		}
	}
	testkit.CLIExpect(t, testkit.ExitOK, "parked: no", "policy", "inspect", "acme", "--database-url", url)
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = 'infinity' where scope_key = 'acme'`)
	testkit.CLIExpect(t, testkit.ExitOK, "parked: until a write", "policy", "inspect", "acme", "--database-url", url)
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = '2031-01-02T03:04:05Z' where scope_key = 'acme'`)
	testkit.CLIExpect(t, testkit.ExitOK, "parked: until 2031-01-02T03:04:05Z", "policy", "inspect", "acme", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "park_dormant: off", "policy", "set-park-dormant", "off", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "parked: no", "policy", "inspect", "acme", "--database-url", url)

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
		testkit.CLIExpect(t, testkit.ExitUsage, "", append(args, "--database-url", url)...)
	}
	if after := admState(t, pool); after != state {
		t.Fatalf("refused CLI input changed the database:\nbefore %s\nafter  %s", state, after)
	}
}

func TestCLISchemaFlagAndEnvironment(t *testing.T) {
	url := pgtest.NewEmptyDatabase(t)
	t.Setenv("DOCKET_DATABASE_URL", url)
	testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "up", "--create", "--schema", "tenant_domain")
	testkit.MigrationExpectApplied(t, url, testkit.MigrateCall{Schema: "tenant_domain"}, testkit.MigrationAllVersions...)
	pool := testkit.PoolFor(t, url)
	if got := testkit.QueryInt64(t, pool, `select count(*) from pg_class where relnamespace = 'public'::regnamespace`); got != 0 {
		t.Fatalf("public holds %d relations after migrating another schema", got)
	}
	testkit.CLIExpect(t, testkit.ExitOK, "initialized: false", "policy", "get", "--schema", "tenant_domain")
	// The public schema of the same database is not a Docket domain.
	testkit.CLIExpect(t, testkit.ExitFailure, "schema mismatch", "policy", "get")
	testkit.CLIExpect(t, testkit.ExitUsage, "", "migrate", "up", "--schema", "bad-name")

	// DOCKET_SCHEMA names the domain when --schema is absent; the flag wins.
	t.Setenv("DOCKET_SCHEMA", "tenant_domain")
	testkit.CLIExpect(t, testkit.ExitOK, "initialized: false", "policy", "get")
	status := testkit.CLIExpect(t, testkit.ExitOK, "", "migrate", "status")
	if strings.Contains(status.Stdout, "pending") || !strings.Contains(status.Stdout, "applied") {
		t.Fatalf("migrate status with DOCKET_SCHEMA:\n%s", status.Stdout)
	}
	testkit.CLIExpect(t, testkit.ExitFailure, "schema mismatch", "policy", "get", "--schema", "public")
	t.Setenv("DOCKET_SCHEMA", "")

	t.Setenv("DOCKET_DATABASE_URL", "")
	testkit.CLIExpect(t, testkit.ExitUsage, "DOCKET_DATABASE_URL", "migrate", "status")
	testkit.CLIExpect(t, testkit.ExitUsage, "DOCKET_DATABASE_URL", "policy", "get")
}

func TestCLIUsageAndFailures(t *testing.T) {
	t.Parallel()
	help := testkit.CLIExpect(t, testkit.ExitOK, "Exit codes:", "help")
	for _, fragment := range []string{"0  success", "1  runtime or database error", "2  usage error", "3  stale version", "docket migrate", "docket policy"} {
		if !strings.Contains(help.Stdout, fragment) {
			t.Fatalf("help lacks %q:\n%s", fragment, help.Stdout)
		}
	}
	testkit.CLIExpect(t, testkit.ExitOK, "docket migrate up|down|status", "migrate", "-h")
	testkit.CLIExpect(t, testkit.ExitUsage, "Usage:")
	testkit.CLIExpect(t, testkit.ExitUsage, "unknown command", "frobnicate")
	testkit.CLIExpect(t, testkit.ExitUsage, "want exactly one", "migrate", "--database-url", "postgres://unused")
	testkit.CLIExpect(t, testkit.ExitUsage, "unknown action", "migrate", "sideways", "--database-url", "postgres://unused")
	testkit.CLIExpect(t, testkit.ExitUsage, "flag provided but not defined", "migrate", "up", "--colour")
	testkit.CLIExpect(t, testkit.ExitUsage, "missing action", "policy")

	v1 := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, v1, testkit.MigrateCall{Target: testkit.MigrationV1Version})
	testkit.CLIExpect(t, testkit.ExitFailure, "schema mismatch", "policy", "get", "--database-url", v1)
	testkit.CLIExpect(t, testkit.ExitFailure, "", "policy", "get", "--database-url", "postgres://docket@127.0.0.1:1/none?connect_timeout=5")
}
