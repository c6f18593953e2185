package admin

import (
	"net/http"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// "docket console" serves the console at the root of a loopback address,
// read-only unless --allow-writes, and stops cleanly when its context ends
// (as on SIGINT or SIGTERM).
func TestCLIConsole(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	databaseURL := d.pool.Config().ConnString()
	base, stop := testkit.ConsoleCLI(t, "--database-url", databaseURL, "--listen", "127.0.0.1:0")
	status, body := testkit.ConsoleCLIGet(t, base+"tenants")
	if status != http.StatusOK {
		t.Fatalf("tenants: %d\n%s", status, body)
	}
	testkit.ExpectRows(t, "tenants", consoleAges(testkit.ConsoleTable(t, body, "tenants")), consoleRowNone, consoleRowAcme, consoleRowBeta, consoleRowCalm, consoleRowZeta, consoleRowXSS)
	resp, err := http.Post(base+"runs/acme/a1/cancel", "application/x-www-form-urlencoded", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a write on the read-only console: %d", resp.StatusCode)
	}
	if code, rest := stop(); code != testkit.ExitOK || rest != "docket console stopped" {
		t.Fatalf("exit %d, output %q", code, rest)
	}

	base, stop = testkit.ConsoleCLI(t, "--database-url", databaseURL, "--listen", "127.0.0.1:0", "--allow-writes")
	if status, body := testkit.ConsoleCLIGet(t, base+"tenants/acme"); status != http.StatusOK || !strings.Contains(body, `id="cap-form"`) {
		t.Fatalf("tenant page with writes: %d\n%s", status, body)
	}
	if code, _ := stop(); code != testkit.ExitOK {
		t.Fatalf("exit %d", code)
	}
}

// "docket console" refuses bad arguments before listening.
func TestCLIConsoleRefusesBadArguments(t *testing.T) {
	t.Setenv("DOCKET_DATABASE_URL", "")
	for name, tc := range map[string]struct {
		args []string
		code int
		msg  string
	}{
		"no database":    {nil, testkit.ExitUsage, "no database"},
		"bad URL":        {[]string{"--database-url", "postgres://%zz"}, testkit.ExitUsage, "invalid database URL"},
		"extra argument": {[]string{"--database-url", "postgres://localhost/x", "now"}, testkit.ExitUsage, `unexpected argument "now"`},
		"unknown flag":   {[]string{"--public"}, testkit.ExitUsage, "flag provided but not defined"},
	} {
		if r := testkit.CLIRun(t, append([]string{"console"}, tc.args...)...); r.Code != tc.code || !strings.Contains(r.Stderr, tc.msg) {
			t.Errorf("%s: exit %d, stderr %q", name, r.Code, r.Stderr)
		}
	}
}
