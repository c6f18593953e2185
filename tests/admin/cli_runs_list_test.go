package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// seedRow is one run of the listing domain, with fixed times so output
// lines can be compared exactly.
type seedRow struct {
	runID, tenant, graph, values string
	startedAt                    string
}

// seedColumns are the columns seedRow.values fills, after run_id,
// tenant_id and graph_id.
const seedColumns = `status, step, checkpoint_seq, wake_at, claim_token, claimed_at,
	poisoned_at, poison_reason, finished_at, claim_attempts`

// seedRuns is a small domain: two tenants and the tenantless scope, one
// run of every shape the listing shows, started one second apart.
var seedRuns = []seedRow{
	{"r1", "acme", "g1", `'running', 0, 0, '2026-01-01T00:00:00Z', null, null, null, null, null, 0`, "2026-01-01T00:00:01Z"},
	{"r2", "acme", "g2", `'waiting', 1, 1, null, null, null, null, null, null, 0`, "2026-01-01T00:00:02Z"},
	{"r3", "beta", "g1", `'running', 2, 3, null, gen_random_uuid(), '2026-01-01T00:01:00Z', null, null, null, 1`, "2026-01-01T00:00:03Z"},
	{"r4", "", "g1", `'done', 4, 5, null, null, null, null, null, '2026-01-01T00:02:00Z', 0`, "2026-01-01T00:00:04Z"},
	{"r5", "beta", "g1", `'running', 0, 0, null, null, null, '2026-01-01T00:03:00Z', 'max_claim_attempts_exceeded', null, 7`, "2026-01-01T00:00:05Z"},
}

// seed inserts seedRuns, each updated at its start time, and returns
// the database URL.
func seed(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	for _, r := range seedRuns {
		var tenant *string
		if r.tenant != "" {
			tenant = &r.tenant
		}
		testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, `+seedColumns+`,
			started_at, updated_at) values ($1, $2, $3, 'h1', '{"n": 1}', `+r.values+`, $4, $4)`,
			r.runID, tenant, r.graph, r.startedAt)
	}
	return pool.Config().ConnString()
}

// cliLines splits output into its lines.
func cliLines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// wantLines requires output to be want, line by line and cell by cell:
// a table's column widths follow its widest cell, so runs of spaces compare
// as one.
func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	cells := func(lines []string) string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = strings.Join(strings.Fields(l), " ")
		}
		return strings.Join(out, "\n")
	}
	if cells(cliLines(got)) != cells(want) {
		t.Fatalf("%s printed\n%s\nwant\n%s", what, got, strings.Join(want, "\n"))
	}
}

// The listing table's header and the seeded runs' rows.
const (
	listHeader = "RUN_ID  SCOPE  GRAPH  STATUS  PHASE  ATTEMPT  STEP  SEQ  CLAIMED  WAKE_AT  UPDATED_AT  LAST_ERROR"
	listR5     = "r5  tenant:beta  g1  running  poisoned  0  0  0  no  -  2026-01-01T00:00:05Z  -"
	listR4     = "r4  tenantless  g1  done  done  0  4  5  no  -  2026-01-01T00:00:04Z  -"
	listR3     = "r3  tenant:beta  g1  running  executing  0  2  3  yes  -  2026-01-01T00:00:03Z  -"
	listR2     = "r2  tenant:acme  g2  waiting  waiting  0  1  1  no  -  2026-01-01T00:00:02Z  -"
	listR1     = "r1  tenant:acme  g1  running  queued  0  0  0  no  2026-01-01T00:00:00Z  2026-01-01T00:00:01Z  -"
)

// "docket runs list" lists every scope newest first as a table that shows
// whether a run is claimed but never its token.
func TestCLIRunsListTable(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--database-url", url)
	wantLines(t, "runs list", r.Stdout, listHeader, listR5, listR4, listR3, listR2, listR1)
	token := queryText(t, pool, `select claim_token::text from docket_runs where run_id = 'r3'`)
	if strings.Contains(r.Stdout, token) || r.Stderr != "" {
		t.Fatalf("runs list leaked the claim token or wrote stderr: %q %q", r.Stdout, r.Stderr)
	}
}

// queryText returns the single text value sql selects.
func queryText(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	var v string
	if err := pool.QueryRow(testkit.Context(t), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

// nextCursor returns the cursor of a table's "next: " line, or "".
func nextCursor(t *testing.T, stdout string) string {
	t.Helper()
	lines := cliLines(stdout)
	cursor, ok := strings.CutPrefix(lines[len(lines)-1], "next: ")
	if !ok {
		return ""
	}
	return cursor
}

// Keyset pagination: each page ends with the cursor of its last run, the
// next page starts strictly after it, and the last page prints no cursor;
// across every scope and within one.
func TestCLIRunsListPages(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	first := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--limit", "3", "--database-url", url)
	wantLines(t, "page 1", first.Stdout, listHeader, listR5, listR4, listR3,
		"next: 2026-01-01T00:00:03Z/r3")
	second := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--limit", "3", "--after", nextCursor(t, first.Stdout), "--database-url", url)
	wantLines(t, "page 2", second.Stdout, listHeader, listR2, listR1)

	// A page that ends exactly at the last run still prints no cursor.
	exact := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--limit", "2", "--after", "2026-01-01T00:00:03Z/r3", "--database-url", url)
	wantLines(t, "exact last page", exact.Stdout, listHeader, listR2, listR1)

	scoped := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--tenant", "acme", "--limit", "1", "--database-url", url)
	wantLines(t, "scoped page 1", scoped.Stdout, listHeader, listR2, "next: 2026-01-01T00:00:02Z/r2")
	scoped = testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--tenant", "acme", "--limit", "1", "--after", nextCursor(t, scoped.Stdout), "--database-url", url)
	wantLines(t, "scoped page 2", scoped.Stdout, listHeader, listR1)
}

// --tenant, --tenantless, --status, --phase and --graph filter, alone and
// together.
func TestCLIRunsListFilters(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--tenant", "acme"}, []string{listR2, listR1}},
		{[]string{"--tenantless"}, []string{listR4}},
		{[]string{"--status", "running"}, []string{listR5, listR3, listR1}},
		{[]string{"--graph", "g2"}, []string{listR2}},
		{[]string{"--tenant", "beta", "--status", "running", "--graph", "g1"}, []string{listR5, listR3}},
		{[]string{"--tenant", "acme", "--status", "done"}, nil},
		{[]string{"--tenant", "nobody"}, nil},
		{[]string{"--phase", "queued"}, []string{listR1}},
		{[]string{"--phase", "poisoned"}, []string{listR5}},
		{[]string{"--phase", "executing", "--tenant", "beta"}, []string{listR3}},
		{[]string{"--phase", "executing", "--tenant", "acme"}, nil},
		{[]string{"--phase", "waiting", "--status", "running"}, nil},
		{[]string{"--phase", "done", "--tenantless"}, []string{listR4}},
		{[]string{"--phase", "ready"}, nil},
	} {
		r := testkit.CLIExpect(t, testkit.ExitOK, "", append(append([]string{"runs", "list"}, c.args...), "--database-url", url)...)
		wantLines(t, "runs list "+strings.Join(c.args, " "), r.Stdout, append([]string{listHeader}, c.want...)...)
	}
}

// --json prints one object per run and a last {"next"} line that continues
// the listing.
func TestCLIRunsListJSON(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--json", "--limit", "3", "--database-url", url)
	lines := cliLines(r.Stdout)
	if len(lines) != 4 {
		t.Fatalf("runs list --json printed %d lines, want 3 runs and a cursor:\n%s", len(lines), r.Stdout)
	}
	type line struct {
		RunID         string  `json:"run_id"`
		Scope         string  `json:"scope"`
		TenantID      *string `json:"tenant_id"`
		GraphID       string  `json:"graph_id"`
		Status        string  `json:"status"`
		Phase         string  `json:"phase"`
		Step          int     `json:"step"`
		CheckpointSeq int64   `json:"checkpoint_seq"`
		Claimed       bool    `json:"claimed"`
		WakeAt        *string `json:"wake_at"`
		StartedAt     string  `json:"started_at"`
		UpdatedAt     string  `json:"updated_at"`
		Attempt       int     `json:"attempt"`
		LastError     *string `json:"last_error"`
		Next          string  `json:"next"`
	}
	got := make([]line, len(lines))
	for i, l := range lines {
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got[i]); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
	}
	beta := "beta"
	want := line{RunID: "r3", Scope: "tenant:beta", TenantID: &beta, GraphID: "g1", Status: "running", Phase: "executing", Step: 2,
		CheckpointSeq: 3, Claimed: true, StartedAt: "2026-01-01T00:00:03Z", UpdatedAt: "2026-01-01T00:00:03Z"}
	if g := got[2]; g.RunID != want.RunID || g.Scope != want.Scope || g.TenantID == nil || *g.TenantID != beta ||
		g.GraphID != want.GraphID || g.Status != want.Status || g.Phase != want.Phase || g.Step != want.Step || g.CheckpointSeq != want.CheckpointSeq ||
		!g.Claimed || g.WakeAt != nil || g.StartedAt != want.StartedAt || g.UpdatedAt != want.UpdatedAt {
		t.Fatalf("r3 as JSON = %+v, want %+v", g, want)
	}
	if got[0].RunID != "r5" || got[1].RunID != "r4" || got[1].TenantID != nil || got[1].Scope != "tenantless" {
		t.Fatalf("first two JSON runs = %+v, %+v", got[0], got[1])
	}
	if got[3] != (line{Next: "2026-01-01T00:00:03Z/r3"}) {
		t.Fatalf("cursor line = %+v", got[3])
	}
	rest := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--json", "--after", got[3].Next, "--database-url", url)
	var ids []string
	for _, l := range cliLines(rest.Stdout) {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		ids = append(ids, v.RunID)
	}
	if strings.Join(ids, ",") != "r2,r1" {
		t.Fatalf("second JSON page = %v, want r2,r1 and no cursor", ids)
	}
	wake := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--json", "--tenant", "acme", "--graph", "g1", "--database-url", url)
	var r1 line
	if err := json.Unmarshal([]byte(wake.Stdout), &r1); err != nil || r1.WakeAt == nil || *r1.WakeAt != "2026-01-01T00:00:00Z" {
		t.Fatalf("r1 as JSON = %+v (%v)", r1, err)
	}
}

// Invalid list arguments exit 2 before any connection; a database that
// cannot be reached exits 1.
func TestCLIRunsListErrors(t *testing.T) {
	t.Parallel()
	unreachable := "postgres://docket@127.0.0.1:1/none?connect_timeout=5"
	for _, c := range []struct {
		args     []string
		fragment string
	}{
		{[]string{"--limit", "0"}, "--limit 0 is outside 1..1000"},
		{[]string{"--limit", "1001"}, "--limit 1001 is outside 1..1000"},
		{[]string{"--limit", "many"}, "invalid value"},
		{[]string{"--status", "stuck"}, `--status "stuck" is not one of running, waiting, done, failed, cancelled`},
		{[]string{"--phase", "running"}, `--phase "running" is not one of queued, ready, executing, retrying, scheduled, paused, waiting, poisoned, done, failed, cancelled`},
		{[]string{"--tenant", "acme", "--tenantless"}, "--tenant and --tenantless exclude each other"},
		{[]string{"--tenant", ""}, "--tenant needs a tenant id"},
		{[]string{"--after", "r3"}, `--after "r3": want STARTED_AT/RUN_ID`},
		{[]string{"--after", "yesterday/r3"}, "not RFC 3339"},
		{[]string{"--after", "2026-01-01T00:00:03Z/"}, "want STARTED_AT/RUN_ID"},
		{[]string{"acme"}, `list takes no arguments, got ["acme"]`},
		{[]string{"--force"}, "--force does not apply to runs list"},
		{[]string{"--batch", "5"}, "--batch does not apply to runs list"},
	} {
		r := testkit.CLIExpect(t, testkit.ExitUsage, c.fragment, append(append([]string{"runs", "list"}, c.args...), "--database-url", unreachable)...)
		if r.Stdout != "" || !strings.Contains(r.Stderr, "docket runs list [--tenant") {
			t.Errorf("runs list %v: stdout %q, stderr lacks the list usage: %q", c.args, r.Stdout, r.Stderr)
		}
	}
	testkit.CLIExpect(t, testkit.ExitFailure, "runs list: ", "runs", "list", "--database-url", unreachable)
}

// The ATTEMPT column is the run's handler-attempt counter and LAST_ERROR
// the first line of its newest failed attempt's error, as the console's
// runs table shows them: an operator's retry entry is no failure, a tab of
// the text prints as a space, and a run without failures prints "-" (null
// in JSON).
func TestCLIRunsListAttemptAndLastError(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	insert := func(runID string, attempt int, errors string) {
		t.Helper()
		testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at,
			attempt, errors, started_at, updated_at)
			values ($1, 'acme', 'g1', 'h1', '{}', 'running', '2026-01-01T00:00:00Z', $2, $3::jsonb, '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z')`,
			runID, attempt, errors)
	}
	insert("failed-twice", 2, `[
		{"attempt": 1, "at": "2025-12-31T23:00:00Z", "kind": "error", "error": "dial tcp: refused\nat line 2"},
		{"attempt": 2, "at": "2025-12-31T23:30:00Z", "kind": "panic", "error": "panic: index out of range\tin worker\ngoroutine 7"},
		{"attempt": 2, "at": "2025-12-31T23:45:00Z", "kind": "retry", "error": "retried by an operator"}]`)
	insert("retried-only", 0, `[{"attempt": 1, "at": "2025-12-31T23:45:00Z", "kind": "retry", "error": "retried by an operator"}]`)
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--database-url", url)
	const lastLine = "panic: index out of range in worker"
	// The error line holds spaces, which wantLines would fold: it is
	// compared whole, then as one cell.
	if strings.Count(r.Stdout, "  "+lastLine+"\n") != 1 {
		t.Fatalf("runs list printed\n%s", r.Stdout)
	}
	wantLines(t, "runs list", strings.ReplaceAll(r.Stdout, lastLine, "LAST"), listHeader,
		"retried-only tenant:acme g1 running queued 0 0 0 no 2026-01-01T00:00:00Z 2026-01-01T00:00:01Z -",
		"failed-twice tenant:acme g1 running queued 2 0 0 no 2026-01-01T00:00:00Z 2026-01-01T00:00:01Z LAST")

	j := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--json", "--database-url", url)
	var got []struct {
		RunID     string  `json:"run_id"`
		Attempt   int     `json:"attempt"`
		LastError *string `json:"last_error"`
	}
	for _, l := range cliLines(j.Stdout) {
		var v struct {
			RunID     string  `json:"run_id"`
			Attempt   int     `json:"attempt"`
			LastError *string `json:"last_error"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		got = append(got, v)
	}
	if len(got) != 2 || got[0].RunID != "retried-only" || got[0].Attempt != 0 || got[0].LastError != nil ||
		got[1].RunID != "failed-twice" || got[1].Attempt != 2 || got[1].LastError == nil || *got[1].LastError != lastLine {
		t.Fatalf("runs list --json printed\n%s", j.Stdout)
	}
}
