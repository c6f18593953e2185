package input

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// badCLIArgs are command lines the docket command must refuse with exit
// code 2 and a message, writing nothing. Each gets --database-url appended.
// A NUL byte is not among them: no command line can carry one (execve ends
// an argument there), and the facade's own refusal of a tenant with NUL is
// in admin_test.go.
var badCLIArgs = [][]string{
	{},
	{"frobnicate"},
	{"MIGRATE", "up"},
	{"migrate"},
	{"migrate", "sideways"},
	{"migrate", "up", "down"},
	{"migrate", "up", "--colour"},
	{"migrate", "up", "--schema", `bad"name`},
	{"migrate", "up", "--schema", "a;drop table docket_runs"},
	{"migrate", "down", "--schema", "docket schema"},
	{"migrate", "status", "--schema", "1st"},
	{"migrate", "up", "--schema", strings.Repeat("s", 64)},
	{"migrate", "up", "--schema", "Ünïcode"},
	{"policy"},
	{"policy", "explode"},
	{"policy", "get", "extra"},
	{"policy", "get", "--tenantless"},
	{"policy", "get", "--expected-version", "1"},
	{"policy", "inspect", "acme", "--expected-version", "0"},
	{"policy", "set-default"},
	{"policy", "set-default", "0"},
	{"policy", "set-default", "-1"},
	{"policy", "set-default", "2147483648"},
	{"policy", "set-default", "99999999999999999999999"},
	{"policy", "set-default", "abc"},
	{"policy", "set-default", "1.5"},
	{"policy", "set-default", "0x10"},
	{"policy", "set-default", " 3"},
	{"policy", "set-default", ""},
	{"policy", "set-default", "3", "4"},
	{"policy", "set-default", "--", "-5"},
	{"policy", "set-default", "3", "--expected-version", "x"},
	{"policy", "set-default", "3", "--expected-version", "99999999999999999999"},
	{"policy", "set-default", "3", "--expected-version", "-1"},
	{"policy", "set-default", "3", "--tenantless"},
	{"policy", "set-override"},
	{"policy", "set-override", "acme"},
	{"policy", "set-override", "acme", "0"},
	{"policy", "set-override", "acme", "-7"},
	{"policy", "set-override", "acme", "2147483648"},
	{"policy", "set-override", "", "3"},
	{"policy", "set-override", strings.Repeat("t", 201), "3"},
	{"policy", "set-override", "bad\nname", "3"},
	{"policy", "set-override", "bad\xffutf8", "3"},
	{"policy", "set-override", "--tenantless", "acme", "3"},
	{"policy", "set-override", "acme", "3", "--expected-version", "-2"},
	{"policy", "reset-override"},
	{"policy", "reset-override", "acme", "5"},
	{"policy", "reset-override", "", "--expected-version", "0"},
	{"policy", "inspect"},
	{"policy", "inspect", "a", "b"},
	{"policy", "inspect", ""},
	{"policy", "inspect", "--tenantless", "acme"},
	{"policy", "inspect", "tab\there"},
}

func TestCLIRefusesBadArgumentsWithExitTwo(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	databaseURL := pool.Config().ConnString()
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	if _, err := client.InsertRun(testkit.Context(t), newRun("cli-run")); err != nil {
		t.Fatalf("insert: %v", err)
	}
	for _, args := range badCLIArgs {
		args := append(append([]string{}, args...), "--database-url", databaseURL)
		if len(args) == 2 {
			args = nil // no arguments at all
		}
		before := testkit.Snap(t, pool)
		r := testkit.CLIRun(t, args...)
		if r.Code != testkit.ExitUsage {
			t.Errorf("docket %q: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.Code, testkit.ExitUsage, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "docket") && !strings.Contains(r.Stderr, "Usage") {
			t.Errorf("docket %q: no message on stderr: %q", args, r.Stderr)
		}
		testkit.ExpectUnchanged(t, strings.Join(args, " "), before, testkit.Snap(t, pool))
	}
	t.Logf("bad command lines tried: %d; all exit %d with a message; writes: 0", len(badCLIArgs), testkit.ExitUsage)
}

func TestCLIRefusesUnparsableDatabaseURLWithExitTwo(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"migrate", "status", "--database-url", "postgres://user@host:notaport/db"},
		{"policy", "get", "--database-url", "postgres://user@host:notaport/db"},
		{"policy", "inspect", "acme", "--database-url", "host=127.0.0.1 port=notaport"},
	} {
		r := testkit.CLIRun(t, args...)
		if r.Code != testkit.ExitUsage || !strings.Contains(r.Stderr, "invalid database URL") {
			t.Errorf("docket %q: exit %d, stderr %q; want exit %d and an invalid-URL message", args, r.Code, r.Stderr, testkit.ExitUsage)
		}
	}
}
