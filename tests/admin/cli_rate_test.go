package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestCLIRateCommands: the domain's default rate and a tenant's own rate,
// exemption and reset, each a compare-and-set, shown by get and inspect with
// the tokens left; invalid rates exit 2 and write nothing.
func TestCLIRateCommands(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))

	expectLines := func(r testkit.CLIResult, lines ...string) {
		t.Helper()
		for _, line := range lines {
			if !strings.Contains(r.Stdout, line+"\n") {
				t.Fatalf("output lacks %q:\n%s", line, r.Stdout)
			}
		}
	}
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "get", "--database-url", url), "default_rate: none", "policy_version: 1")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-rate", "50/1s", "--burst", "5", "--expected-version", "1", "--database-url", url),
		"default_rate: 50/1s burst 5", "policy_version: 2")
	testkit.CLIExpect(t, testkit.ExitStale, "stale", "policy", "set-rate", "none", "--expected-version", "1", "--database-url", url)
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "inspect", "acme", "--database-url", url),
		"rate: 50/1s burst 5", "rate_source: default", "rate_tokens: 6", "next_admission_at: now")

	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-tenant-rate", "acme", "10/1m0s", "--expected-version", "0", "--database-url", url),
		"scope: tenant:acme", "rate: 10/1m0s", "partition_version: 1")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "inspect", "acme", "--database-url", url),
		"rate: 10/1m0s", "rate_source: override", "rate_tokens: 1")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-tenant-rate", "acme", "exempt", "--database-url", url),
		"rate: exempt", "partition_version: 2")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "inspect", "acme", "--database-url", url),
		"rate: none", "rate_source: exempt")
	testkit.CLIExpect(t, testkit.ExitStale, "stale", "policy", "reset-tenant-rate", "acme", "--expected-version", "1", "--database-url", url)
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "reset-tenant-rate", "acme", "--database-url", url),
		"rate: default", "partition_version: 3")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "set-rate", "none", "--database-url", url), "default_rate: none")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "inspect", "acme", "--database-url", url), "rate: none", "rate_source: none")

	// The queue-wide pause: a compare-and-set of the policy row.
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "get", "--database-url", url), "domain_paused: no", "policy_version: 3")
	testkit.CLIExpect(t, testkit.ExitStale, "stale", "policy", "pause-domain", "--expected-version", "2", "--database-url", url)
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "pause-domain", "--expected-version", "3", "--database-url", url),
		"domain_paused: yes", "policy_version: 4")
	expectLines(testkit.CLIExpect(t, testkit.ExitOK, "", "policy", "resume-domain", "--database-url", url), "domain_paused: no", "policy_version: 5")

	state := admState(t, pool)
	for _, args := range [][]string{
		{"policy", "set-rate", "0/1s"},
		{"policy", "set-rate", "5/0s"},
		{"policy", "set-rate", "5"},
		{"policy", "set-rate", "five/1s"},
		{"policy", "set-rate", "5/1s", "--burst", "-1"},
		{"policy", "set-rate", "none", "--burst", "2"},
		{"policy", "set-rate", "5/200h"},
		{"policy", "set-rate", "exempt"},
		{"policy", "set-tenant-rate", "acme", "none"},
		{"policy", "set-tenant-rate", "acme"},
		{"policy", "reset-tenant-rate", "acme", "--burst", "1"},
		{"policy", "get", "--burst", "1"},
		{"policy", "pause-domain", "acme"},
		{"policy", "resume-domain", "--burst", "1"},
	} {
		testkit.CLIExpect(t, testkit.ExitUsage, "", append(args, "--database-url", url)...)
	}
	if got := admState(t, pool); got != state {
		t.Fatalf("refused rate commands changed the domain:\n%s\nwant\n%s", got, state)
	}
}
