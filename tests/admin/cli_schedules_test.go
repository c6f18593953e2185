package admin

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// scheduleLines are the "name: value" lines of a schedule as add, pause
// and resume print them.
func scheduleLines(scope, name, graph, cadence, zone, missed, paused, next, last string, version int) []string {
	return []string{
		"scope: " + scope, "name: " + name, "graph_id: " + graph, "graph_hash: v1", "cadence: " + cadence,
		"time_zone: " + zone, "missed_ticks: " + missed, "paused: " + paused, "next_tick_at: " + next,
		"last_tick_at: " + last, "version: " + strconv.Itoa(version),
	}
}

// "docket schedules" adds, lists, pauses, resumes and removes schedules,
// with exact output, typed exit codes and nothing changed on a refusal.
func TestCLISchedules(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	client := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})

	r := testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "add", "acme", "nightly", "--state", "{}", "--cron", "30 2 * * *", "--time-zone", "Europe/Berlin",
		"--graph", "report", "--graph-hash", "v1", "--start", "2026-12-01T10:00:00Z", "--database-url", url)
	wantLines(t, "add nightly", r.Stdout, scheduleLines("tenant:acme", "nightly", "report", "30 2 * * *", "Europe/Berlin",
		"skip", "no", "2026-12-02T01:30:00Z", "none", 1)...)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "add", "--tenantless", "pulse", "--every", "90s", "--missed-ticks", "all",
		"--graph", "ping", "--graph-hash", "v1", "--state", `{"n": 1}`, "--start", "2026-12-01T10:00:00Z", "--database-url", url)
	wantLines(t, "add pulse", r.Stdout, scheduleLines("tenantless", "pulse", "ping", "every 90s", "UTC",
		"all", "no", "2026-12-01T10:01:30Z", "none", 1)...)
	testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "add", "acme", "hourly", "--state", "{}", "--every", "1h", "--graph", "report", "--graph-hash", "v1",
		"--start", "2026-12-01T10:00:00Z", "--database-url", url)

	const header = "SCOPE NAME CADENCE ZONE MISSED PAUSED NEXT_TICK LAST_TICK VERSION"
	pulse := "tenantless pulse every 90s UTC all no 2026-12-01T10:01:30Z none 1"
	hourly := "tenant:acme hourly every 1h UTC skip no 2026-12-01T11:00:00Z none 1"
	nightly := "tenant:acme nightly 30 2 * * * Europe/Berlin skip no 2026-12-02T01:30:00Z none 1"
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--database-url", url)
	wantLines(t, "list", r.Stdout, header, pulse, hourly, nightly)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--limit", "2", "--database-url", url)
	wantLines(t, "list page 1", r.Stdout, header, pulse, hourly, "next: tenant:acme/hourly")
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--limit", "2", "--after", nextCursor(t, r.Stdout), "--database-url", url)
	wantLines(t, "list page 2", r.Stdout, header, nightly)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--tenant", "acme", "--limit", "1", "--database-url", url)
	wantLines(t, "list acme", r.Stdout, header, hourly, "next: tenant:acme/hourly")
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--tenantless", "--json", "--database-url", url)
	if want := `{"scope":"tenantless","name":"pulse","graph_id":"ping","graph_hash":"v1","state":{"n":1},"cron":null,` +
		`"every_seconds":90,"time_zone":"UTC","missed_ticks":"all","paused":false,"paused_at":null,` +
		`"next_tick_at":"2026-12-01T10:01:30Z","last_tick_at":null,"version":1}` + "\n"; r.Stdout != want {
		t.Fatalf("list --json printed\n%s\nwant\n%s", r.Stdout, want)
	}
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--json", "--limit", "1", "--database-url", url)
	if lines := cliLines(r.Stdout); len(lines) != 2 || lines[1] != `{"next":"tenantless/pulse"}` {
		t.Fatalf("list --json --limit 1 printed %q", r.Stdout)
	}

	// Refusals exit 2 or 3 and change nothing.
	before := testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--database-url", url).Stdout
	for _, tc := range []struct {
		code   int
		stderr string
		args   []string
	}{
		{testkit.ExitStale, "docket: schedules pause: stale version: expected 2, current 1\n",
			[]string{"pause", "acme", "nightly", "--expected-version", "2"}},
		{testkit.ExitStale, "docket: schedules remove: stale version: expected 5, current 1\n",
			[]string{"remove", "acme", "nightly", "--expected-version", "5"}},
		{testkit.ExitUsage, "docket: schedules add: duplicate schedule name: \"nightly\" in tenant:acme\n",
			[]string{"add", "acme", "nightly", "--state", "{}", "--every", "1m", "--graph", "g", "--graph-hash", "h"}},
		{testkit.ExitUsage, "docket: schedules add: invalid schedule: every \"1.5s\": must be a whole number of seconds, at least one\n",
			[]string{"add", "acme", "fast", "--state", "{}", "--every", "1500ms", "--graph", "g", "--graph-hash", "h"}},
		{testkit.ExitUsage, "docket: schedules add: invalid schedule: cron hour \"25\": 25 is outside 0-23\n",
			[]string{"add", "acme", "bad", "--state", "{}", "--cron", "0 25 * * *", "--graph", "g", "--graph-hash", "h"}},
		{testkit.ExitFailure, "docket: schedules resume: not found: schedule \"nope\" in tenant:acme\n",
			[]string{"resume", "acme", "nope"}},
	} {
		r := testkit.CLIRun(t, append(append([]string{"schedules"}, tc.args...), "--database-url", url)...)
		if r.Code != tc.code || r.Stderr != tc.stderr || r.Stdout != "" {
			t.Errorf("schedules %s: exit %d\nstdout %q\nstderr %q\nwant exit %d, stderr %q", strings.Join(tc.args, " "), r.Code, r.Stdout, r.Stderr, tc.code, tc.stderr)
		}
	}
	if after := testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--database-url", url).Stdout; after != before {
		t.Fatalf("refusals changed the schedules:\n%s\nwas\n%s", after, before)
	}
	testkit.CLIExpect(t, testkit.ExitUsage, "--json does not apply to schedules pause", "schedules", "pause", "acme", "nightly", "--json", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitUsage, `--start "tomorrow" is not an RFC 3339 time`, "schedules", "add", "acme", "x", "--state", "{}", "--every", "1m", "--start", "tomorrow", "--database-url", url)

	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "pause", "acme", "nightly", "--expected-version", "1", "--database-url", url)
	paused := testkit.ScheduleFetch(t, client, docket.Tenant("acme"), "nightly")
	wantLines(t, "pause", r.Stdout, scheduleLines("tenant:acme", "nightly", "report", "30 2 * * *", "Europe/Berlin",
		"skip", "since "+paused.PausedAt.UTC().Format(time.RFC3339Nano), "2026-12-02T01:30:00Z", "none", 2)...)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "resume", "acme", "nightly", "--database-url", url)
	resumed := testkit.ScheduleFetch(t, client, docket.Tenant("acme"), "nightly")
	wantLines(t, "resume", r.Stdout, scheduleLines("tenant:acme", "nightly", "report", "30 2 * * *", "Europe/Berlin",
		"skip", "no", resumed.NextTickAt.UTC().Format(time.RFC3339Nano), "none", 3)...)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "remove", "acme", "nightly", "--expected-version", "3", "--database-url", url)
	wantLines(t, "remove", r.Stdout, "scope: tenant:acme", "name: nightly", "removed: yes")
	testkit.CLIExpect(t, testkit.ExitFailure, `not found: schedule "nightly" in tenant:acme`, "schedules", "remove", "acme", "nightly", "--database-url", url)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "list", "--database-url", url)
	wantLines(t, "list after remove", r.Stdout, header, pulse, hourly)
}

// --help on "docket schedules" and each of its actions prints only that
// usage on stdout and exits 0.
// --cron "@every DURATION" adds an interval schedule, listed as --every
// would list it; under a second it exits 2 and adds nothing.
func TestCLISchedulesEveryDescriptor(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "schedules", "add", "acme", "pulse", "--state", "{}", "--cron", "@every 2m",
		"--graph", "report", "--graph-hash", "v1", "--start", "2026-12-01T10:00:00Z", "--database-url", url)
	wantLines(t, "add pulse", r.Stdout, scheduleLines("tenant:acme", "pulse", "report", "every 2m", "UTC",
		"skip", "no", "2026-12-01T10:02:00Z", "none", 1)...)
	before := testkit.Snap(t, pool)
	r = testkit.CLIRun(t, "schedules", "add", "acme", "fast", "--state", "{}", "--cron", "@every 999ms",
		"--graph", "report", "--graph-hash", "v1", "--database-url", url)
	if want := "docket: schedules add: invalid schedule: cron \"@every 999ms\": must be a whole number of seconds, at least one\n"; r.Code != testkit.ExitUsage || r.Stdout != "" || r.Stderr != want {
		t.Fatalf("@every 999ms: exit %d, stdout %q, stderr %q; want exit 2 and %q", r.Code, r.Stdout, r.Stderr, want)
	}
	testkit.ExpectUnchanged(t, "a refused @every", before, testkit.Snap(t, pool))
}

func TestCLISchedulesHelp(t *testing.T) {
	t.Parallel()
	heads := map[string]string{
		"schedules list":   "docket schedules list [--tenant TENANT | --tenantless]",
		"schedules add":    "docket schedules add TENANT NAME (--cron EXPR",
		"schedules pause":  "docket schedules pause TENANT NAME",
		"schedules resume": "docket schedules resume TENANT NAME",
		"schedules remove": "docket schedules remove TENANT NAME",
	}
	for action, head := range heads {
		for _, args := range [][]string{
			append(strings.Fields(action), "--help"),
			append(strings.Fields(action), "acme", "x", "-h"),
		} {
			r := testkit.CLIExpect(t, testkit.ExitOK, "", args...)
			if !strings.HasPrefix(r.Stdout, head) || r.Stderr != "" || strings.Contains(r.Stdout, "Exit codes:") {
				t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
			}
			for other, otherHead := range heads {
				if other != action && strings.Contains(r.Stdout, otherHead) {
					t.Errorf("docket %s printed the usage of %s too", strings.Join(args, " "), other)
				}
			}
		}
	}
	for _, args := range [][]string{{"schedules", "--help"}, {"schedules", "-h"}, {"help", "schedules"}} {
		r := testkit.CLIExpect(t, testkit.ExitOK, "", args...)
		if !strings.HasPrefix(r.Stdout, "docket schedules <action>") || r.Stderr != "" {
			t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
		}
	}
	testkit.CLIExpect(t, testkit.ExitUsage, "schedules: missing action", "schedules")
	testkit.CLIExpect(t, testkit.ExitUsage, `schedules: unknown action "edit"`, "schedules", "edit")
}
