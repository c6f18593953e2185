package tests

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/internal/cli"
)

// consoleCLI runs "docket console" in-process until stop is called and
// returns the URL it printed; wait returns its exit code and the rest of
// its output.
func consoleCLI(t *testing.T, args ...string) (baseURL string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		code := cli.Run(ctx, append([]string{"console"}, args...), pw, &stderr)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		cancel()
		t.Fatalf("docket console printed nothing (exit %d); stderr:\n%s", <-done, stderr.String())
	}
	m := regexp.MustCompile(`^docket console \((read-only|writes enabled)\) listening on (http://127\.0\.0\.1:[0-9]+/)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		cancel()
		t.Fatalf("first line %q", lines.Text())
	}
	return m[2], func() (int, string) {
		cancel()
		var rest []string
		for lines.Scan() {
			rest = append(rest, lines.Text())
		}
		return <-done, strings.Join(rest, "\n")
	}
}

// consoleCLIGet fetches a page of a console the CLI serves.
func consoleCLIGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// "docket console" serves the console at the root of a loopback address,
// read-only unless --allow-writes, and stops cleanly when its context ends
// (as on SIGINT or SIGTERM).
func TestCLIConsole(t *testing.T) {
	t.Parallel()
	d := consoleSeed(t)
	databaseURL := d.pool.Config().ConnString()
	base, stop := consoleCLI(t, "--database-url", databaseURL, "--listen", "127.0.0.1:0")
	status, body := consoleCLIGet(t, base+"tenants")
	if status != http.StatusOK {
		t.Fatalf("tenants: %d\n%s", status, body)
	}
	expectRows(t, "tenants", consoleTable(t, body, "tenants"), consoleRowNone, consoleRowAcme, consoleRowBeta, consoleRowCalm, consoleRowZeta, consoleRowXSS)
	resp, err := http.Post(base+"runs/acme/a1/cancel", "application/x-www-form-urlencoded", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a write on the read-only console: %d", resp.StatusCode)
	}
	if code, rest := stop(); code != cli.ExitOK || rest != "docket console stopped" {
		t.Fatalf("exit %d, output %q", code, rest)
	}

	base, stop = consoleCLI(t, "--database-url", databaseURL, "--listen", "127.0.0.1:0", "--allow-writes")
	if status, body := consoleCLIGet(t, base+"tenants/acme"); status != http.StatusOK || !strings.Contains(body, `id="cap-form"`) {
		t.Fatalf("tenant page with writes: %d\n%s", status, body)
	}
	if code, _ := stop(); code != cli.ExitOK {
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
		"no database":    {nil, cli.ExitUsage, "no database"},
		"bad URL":        {[]string{"--database-url", "postgres://%zz"}, cli.ExitUsage, "invalid database URL"},
		"extra argument": {[]string{"--database-url", "postgres://localhost/x", "now"}, cli.ExitUsage, `unexpected argument "now"`},
		"unknown flag":   {[]string{"--public"}, cli.ExitUsage, "flag provided but not defined"},
	} {
		var stdout, stderr strings.Builder
		if code := cli.Run(testContext(t), append([]string{"console"}, tc.args...), &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr.String())
		}
	}
}
