package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// "docket runs show" prints the public and scheduling views of one run:
// claim held or not (never the token), attempts, poison reason, admission
// state and the error history, one quoted line per entry, oldest first;
// --json prints the same as one object.
func TestCLIRunsShow(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	testkit.ExecSQL(t, pool, `update docket_runs set latest_checkpoint_type = 'step', claim_abandons = 2, attempt = 2,
		errors = '[{"attempt": 1, "at": "2026-01-01T00:00:01.5+00:00", "kind": "panic", "error": "nil map"},
		           {"attempt": 2, "at": "2026-01-01T00:00:02+00:00", "kind": "error", "error": "line one\nline \"two\""}]'
		 where run_id = 'r3'`)
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "show", "beta", "r3", "--database-url", url)
	wantLines(t, "runs show beta r3", r.Stdout,
		"scope: tenant:beta",
		"run_id: r3",
		"graph_id: g1",
		"graph_hash: h1",
		"status: running",
		"phase: executing",
		"step: 2",
		"checkpoint_seq: 3",
		"latest_checkpoint_type: step",
		"claim_attempts: 1",
		"claim_abandons: 2",
		"attempt: 2",
		"errors: 2",
		"claimed: yes",
		"claimed_at: 2026-01-01T00:01:00Z",
		"wake_at: none",
		"poisoned_at: none",
		"poison_reason: none",
		"admission_state: unadmitted-claimed",
		"admitted_at: none",
		"started_at: 2026-01-01T00:00:03Z",
		"updated_at: 2026-01-01T00:00:03Z",
		"finished_at: none",
		"unique_key: none",
		"unique_bucket: none",
		`state: {"n": 1}`,
		`error: attempt 1 at 2026-01-01T00:00:01.5Z panic "nil map"`,
		`error: attempt 2 at 2026-01-01T00:00:02Z error "line one\nline \"two\""`,
	)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "show", "beta", "r3", "--json", "--database-url", url)
	var withErrors struct {
		Attempt int `json:"attempt"`
		Errors  []struct {
			Attempt int    `json:"attempt"`
			At      string `json:"at"`
			Kind    string `json:"kind"`
			Error   string `json:"error"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &withErrors); err != nil {
		t.Fatalf("runs show --json printed %q: %v", r.Stdout, err)
	}
	if e := withErrors.Errors; withErrors.Attempt != 2 || len(e) != 2 || e[0].Attempt != 1 || e[0].At != "2026-01-01T00:00:01.5Z" ||
		e[0].Kind != "panic" || e[0].Error != "nil map" || e[1].Error != "line one\nline \"two\"" {
		t.Fatalf("runs show --json attempt and errors: %+v", withErrors)
	}
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "show", "beta", "r5", "--json", "--database-url", url)
	var v map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
		t.Fatalf("runs show --json printed %q: %v", r.Stdout, err)
	}
	for key, want := range map[string]any{
		"run_id": "r5", "scope": "tenant:beta", "status": "running", "phase": "poisoned", "claimed": false, "claimed_at": nil,
		"claim_attempts": 7.0, "poisoned_at": "2026-01-01T00:03:00Z", "poison_reason": "max_claim_attempts_exceeded",
		"admission_state": "inactive", "finished_at": nil, "attempt": 0.0,
	} {
		if v[key] != want {
			t.Errorf("runs show --json %s = %#v, want %#v", key, v[key], want)
		}
	}
	if errs, ok := v["errors"].([]any); !ok || len(errs) != 0 {
		t.Errorf("runs show --json errors = %#v, want []", v["errors"])
	}
	if state, ok := v["state"].(map[string]any); !ok || state["n"] != 1.0 {
		t.Errorf("runs show --json state = %#v", v["state"])
	}
	testkit.CLIExpect(t, testkit.ExitOK, "finished_at: 2026-01-01T00:02:00Z", "runs", "show", "--tenantless", "r4", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "admission_state: queued", "runs", "show", "acme", "r1", "--database-url", url)
	// A unique run shows the key it holds and its bucket.
	testkit.ExecSQL(t, pool, `update docket_runs set unique_key = 'daily', unique_bucket = '2026-01-01T00:00:00Z', unique_statuses = '{running}' where run_id = 'r1'`)
	testkit.CLIExpect(t, testkit.ExitOK, "unique_key: daily\nunique_bucket: 2026-01-01T00:00:00Z\n", "runs", "show", "acme", "r1", "--database-url", url)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "show", "acme", "r1", "--json", "--database-url", url)
	var unique struct {
		Key    string  `json:"unique_key"`
		Bucket *string `json:"unique_bucket"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &unique); err != nil || unique.Key != "daily" || unique.Bucket == nil || *unique.Bucket != "2026-01-01T00:00:00Z" {
		t.Fatalf("runs show --json of a unique run = %q (%v)", r.Stdout, err)
	}

	// Another scope's run reads as missing.
	testkit.CLIExpect(t, testkit.ExitFailure, "not found", "runs", "show", "acme", "r3", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitFailure, "not found", "runs", "show", "--tenantless", "r1", "--database-url", url)
	for _, args := range [][]string{
		{"runs", "show", "beta"},
		{"runs", "show"},
		{"runs", "show", "beta", "r3", "extra"},
		{"runs", "show", "beta", "r3", "--limit", "2"},
		{"runs", "show", "beta", "r3", "--force"},
	} {
		testkit.CLIExpect(t, testkit.ExitUsage, "docket runs show TENANT RUN_ID", append(args, "--database-url", url)...)
	}
}

// cancel, resume and retry-poisoned change a run through the facade and
// print it; a refused transition exits 2 and a missing run exits 1, both
// with the database unchanged.
func TestCLIRunsSignals(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status)
		values ('w2', 'acme', 'g1', 'h1', '{}', 'waiting')`)

	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "resume", "acme", "r2", "--database-url", url)
	if len(cliLines(r.Stdout)) != 6 || cliLines(r.Stdout)[2] != "status: running" || cliLines(r.Stdout)[0] != "scope: tenant:acme" {
		t.Fatalf("runs resume printed %q", r.Stdout)
	}
	if got := queryText(t, pool, `select status || ' ' || (wake_at is not null)::text from docket_runs where run_id = 'r2'`); got != "running true" {
		t.Fatalf("r2 after resume: %s", got)
	}
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "cancel", "beta", "r3", "--database-url", url)
	wantLines(t, "runs cancel beta r3", r.Stdout, "scope: tenant:beta", "run_id: r3", "status: cancelled", "step: 2", "checkpoint_seq: 3")
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where run_id = 'r3' and claim_token is null and finished_at is not null`); got != 1 {
		t.Fatal("cancel left r3 claimed or unfinished")
	}
	testkit.CLIExpect(t, testkit.ExitOK, "status: cancelled", "runs", "cancel", "acme", "w2", "--database-url", url)
	r = testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "retry-poisoned", "beta", "r5", "--database-url", url)
	if lines := cliLines(r.Stdout); len(lines) != 6 || lines[1] != "run_id: r5" || lines[2] != "status: running" {
		t.Fatalf("runs retry-poisoned printed %q", r.Stdout)
	}
	if got := testkit.QueryInt64(t, pool, `select claim_attempts from docket_runs where run_id = 'r5' and poisoned_at is null`); got != 0 {
		t.Fatalf("r5 after retry-poisoned has %d claim attempts", got)
	}

	before := admState(t, pool)
	for _, c := range []struct {
		code     int
		fragment string
		args     []string
	}{
		{testkit.ExitUsage, `run "r4" is done; cancel applies only to a run that is running, waiting or poisoned; use docket runs retry --force to run it again`, []string{"cancel", "--tenantless", "r4"}},
		{testkit.ExitUsage, `run "r3" is cancelled; cancel applies only to a run that is running, waiting or poisoned; use docket runs retry to run it again`, []string{"cancel", "beta", "r3"}},
		{testkit.ExitUsage, `run "r1" is running; resume applies only to a run that is waiting`, []string{"resume", "acme", "r1"}},
		{testkit.ExitUsage, `run "r4" is done; resume applies only to a run that is waiting`, []string{"resume", "--tenantless", "r4"}},
		{testkit.ExitUsage, `run "r5" is running; retry-poisoned applies only to a run that is poisoned`, []string{"retry-poisoned", "beta", "r5"}},
		{testkit.ExitUsage, `run "r1" is running; retry-poisoned applies only to a run that is poisoned`, []string{"retry-poisoned", "acme", "r1"}},
		{testkit.ExitFailure, "not found", []string{"cancel", "acme", "nope"}},
		{testkit.ExitFailure, "not found", []string{"resume", "beta", "r2"}},
		{testkit.ExitFailure, "not found", []string{"retry-poisoned", "--tenantless", "r5"}},
		{testkit.ExitUsage, "missing TENANT", []string{"cancel"}},
		{testkit.ExitUsage, "want RUN_ID", []string{"resume", "acme"}},
		{testkit.ExitUsage, "want RUN_ID", []string{"retry-poisoned", "--tenantless", "a", "b"}},
		{testkit.ExitUsage, "--json does not apply to runs cancel", []string{"cancel", "acme", "r1", "--json"}},
		{testkit.ExitUsage, "--force does not apply to runs resume", []string{"resume", "acme", "r1", "--force"}},
		{testkit.ExitUsage, "--status does not apply to runs retry-poisoned", []string{"retry-poisoned", "acme", "r1", "--status", "done"}},
	} {
		testkit.CLIExpect(t, c.code, c.fragment, append(append([]string{"runs"}, c.args...), "--database-url", url)...)
	}
	if after := admState(t, pool); after != before {
		t.Fatalf("refused signals changed the database:\nbefore %s\nafter  %s", before, after)
	}
}

// Reads accept exactly the ids a write can store: a 100 KB run id or tenant
// id is refused before any statement, without echoing it, and so is a
// blank one.
func TestCLIRunsShowRefusesIdsNoRunCanHave(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := seed(t, pool)
	long := strings.Repeat("x", 100_000)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"beta", long}, "docket: runs show: invalid argument: run id is 100000 bytes, over the 200-byte limit\n"},
		{[]string{long, "r3"}, "docket: runs show: invalid argument: tenant id is 100000 bytes, over the 200-byte limit\n"},
		{[]string{"beta", "  "}, "docket: runs show: invalid argument: run id is blank\n"},
	} {
		r := testkit.CLIRun(t, append(append([]string{"runs", "show"}, c.args...), "--database-url", url)...)
		if r.Code == testkit.ExitOK || r.Stdout != "" || !strings.HasSuffix(r.Stderr, c.want) || len(r.Stderr) > 300 {
			t.Fatalf("runs show %.20q: exit %d\nstdout: %q\nstderr: %.400q\nwant stderr ending %q", c.args, r.Code, r.Stdout, r.Stderr, c.want)
		}
	}
}
