package usage

import (
	"bufio"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// demoKeepCommand matches one printed console command.
var demoKeepCommand = regexp.MustCompile(`(?m)^  docket console --database-url '([^']+)' --schema (docket_demo_(legacy|tenant_fair)_[0-9a-f]{8})$`)

// "docket demo --keep" on an existing database keeps both schemas and prints
// the console command for each, which then serves the drained domain.
func TestDemoKeepPrintsConsoleCommands(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	code, stdout, stderr := demoRun(t, "--database-url", url, "--keep",
		"--hot-runs", "20", "--light-tenants", "2", "--light-runs", "2", "--handler-time", "0s")
	if code != testkit.ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "kept the demo's schemas; database URL: "+url+"\n") {
		t.Fatalf("no database URL line:\n%s", stdout)
	}
	commands := demoKeepCommand.FindAllStringSubmatch(stdout, -1)
	if len(commands) != 2 || commands[0][3] != "legacy" || commands[1][3] != "tenant_fair" || commands[0][1] != url {
		t.Fatalf("console commands %q in:\n%s", commands, stdout)
	}
	pool := testkit.PoolFor(t, url)
	if n := testkit.QueryInt64(t, pool, `select count(*) from information_schema.schemata where schema_name like 'docket\_demo\_%'`); n != 2 {
		t.Fatalf("%d demo schemas kept, want 2", n)
	}
	base, stop := testkit.ConsoleCLI(t, "--database-url", url, "--schema", commands[1][2], "--listen", "127.0.0.1:0")
	status, body := testkit.ConsoleCLIGet(t, base)
	if status != http.StatusOK || testkit.ConsoleFacts(t, body, "engine") != "tenant_fair" || testkit.ConsoleFacts(t, body, "partitions") != "3" {
		t.Fatalf("the kept TenantFair domain: %d\n%s", status, body)
	}
	testkit.ExpectRows(t, "statuses", testkit.ConsoleTable(t, body, "statuses"), "running | 0", "waiting | 0", "done | 24", "failed | 0", "cancelled | 0")
	if code, _ := stop(); code != testkit.ExitOK {
		t.Fatalf("console exit %d", code)
	}
}

// "docket demo --keep" on its throwaway server leaves it running, prints its
// URL, and removes it only when it is interrupted (Ctrl-C).
func TestDemoKeepWaitsBeforeRemovingItsServer(t *testing.T) {
	t.Parallel()
	demo := testkit.CLIStart(t, "demo", "--keep", "--hot-runs", "10", "--light-tenants", "1", "--light-runs", "2", "--handler-time", "0s")
	lines := bufio.NewScanner(demo.Stdout)
	var out []string
	for lines.Scan() {
		out = append(out, lines.Text())
		if lines.Text() == "the local PostgreSQL keeps running until Ctrl-C" {
			break
		}
	}
	commands := demoKeepCommand.FindAllStringSubmatch(strings.Join(out, "\n"), -1)
	if len(commands) != 2 {
		demo.Interrupt()
		code, stderr := demo.Wait()
		t.Fatalf("no console commands (exit %v):\n%s\nstderr:\n%s", code, strings.Join(out, "\n"), stderr)
	}
	// The server is still up: the kept schema answers.
	pool := testkit.PoolFor(t, commands[1][1])
	if n := testkit.QueryInt64(t, pool, `select count(*) from `+commands[1][2]+`.docket_runs where status = 'done'`); n != 12 {
		t.Fatalf("%d done runs in the kept schema, want 12", n)
	}
	pool.Close()
	demo.Interrupt()
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	if code, stderr := demo.Wait(); code != testkit.ExitOK || !strings.Contains(strings.Join(rest, "\n"), "removed the local PostgreSQL") {
		t.Fatalf("exit %d after the stop; output:\n%s\nstderr:\n%s", code, strings.Join(rest, "\n"), stderr)
	}
}
