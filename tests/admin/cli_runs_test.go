package admin

import (
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// runsInsert inserts a run of tenant (nil for tenantless) with status,
// finished at finishedAt when the status is terminal.
func runsInsert(t *testing.T, url, runID string, tenant any, status string, finishedAt *time.Time) {
	t.Helper()
	pool := testkit.PoolFor(t, url)
	var wake any
	if status == "running" {
		wake = time.Now()
	}
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, finished_at)
		values ($1, $2, 'g', 'h1', $3, '{}', $4, $5)`, runID, tenant, status, wake, finishedAt)
}

// "docket runs" prints only its usage for --help, -h and "help runs".
func TestCLIRunsHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"runs", "--help"}, {"runs", "-h"}, {"help", "runs"}, {"runs", "retry", "--help"}, {"runs", "prune", "-h"}} {
		r := testkit.CLIExpect(t, testkit.ExitOK, "", args...)
		if !strings.HasPrefix(r.Stdout, "docket runs <action>") || strings.Contains(r.Stdout, "Exit codes:") || r.Stderr != "" {
			t.Errorf("docket %s printed\nstdout: %q\nstderr: %q", strings.Join(args, " "), r.Stdout, r.Stderr)
		}
	}
	if r := testkit.CLIExpect(t, testkit.ExitOK, "", "help"); !strings.Contains(r.Stdout, "  runs       list, show, signal, retry or prune runs") {
		t.Errorf("docket help lacks the runs command:\n%s", r.Stdout)
	}
}

// "docket runs retry" revives failed and cancelled runs, refuses a done run
// without --force and an unfinished run (exit 2), reports a missing run
// (exit 1) and addresses the tenantless scope with --tenantless.
func TestCLIRunsRetry(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	now := time.Now()
	runsInsert(t, url, "failed", "acme", "failed", &now)
	runsInsert(t, url, "done", "acme", "done", &now)
	runsInsert(t, url, "queued", "acme", "running", nil)
	runsInsert(t, url, "loose", nil, "cancelled", &now)

	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "retry", "acme", "failed", "--database-url", url)
	for _, line := range []string{"scope: tenant:acme", "run_id: failed", "status: running", "checkpoint_seq: 0"} {
		if !strings.Contains(r.Stdout, line+"\n") {
			t.Fatalf("runs retry lacks %q:\n%s", line, r.Stdout)
		}
	}
	testkit.CLIExpect(t, testkit.ExitUsage, `run "failed" is running; retry applies only to a run that is failed or cancelled`, "runs", "retry", "acme", "failed", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitUsage, "use docket runs retry --force to run it again", "runs", "retry", "acme", "done", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitUsage, `run "queued" is running; retry applies only`, "runs", "retry", "acme", "queued", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitFailure, "not found", "runs", "retry", "beta", "failed", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "status: running", "runs", "retry", "--force", "acme", "done", "--database-url", url)
	testkit.CLIExpect(t, testkit.ExitOK, "scope: tenantless", "runs", "retry", "--tenantless", "loose", "--database-url", url)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where status = 'running' and finished_at is null`); got != 4 {
		t.Fatalf("running runs after the retries = %d, want 4", got)
	}
	if got := testkit.QueryInt64(t, pool, `select sum(unfinished_count) from docket_claim_schedule`); got != 4 {
		t.Fatalf("unfinished count after the retries = %d, want 4", got)
	}

	for _, args := range [][]string{
		{"runs", "retry", "acme"},
		{"runs", "retry", "acme", "failed", "extra"},
		{"runs", "retry", "--tenantless"},
		{"runs", "retry", "acme", "failed", "--batch", "5"},
		{"runs", "nope"},
		{"runs"},
	} {
		testkit.CLIExpect(t, testkit.ExitUsage, "", append(args, "--database-url", url)...)
	}
}

// "docket runs prune" deletes the runs finished before a duration ago or a
// timestamp, printing each batch and the total, and refuses bad input with
// exit 2 before connecting.
func TestCLIRunsPrune(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	old, recent := time.Now().Add(-2*time.Hour), time.Now().Add(-10*time.Minute)
	for _, id := range []string{"old-1", "old-2", "old-3"} {
		runsInsert(t, url, id, "acme", "done", &old)
	}
	runsInsert(t, url, "recent", "acme", "failed", &recent)
	runsInsert(t, url, "queued", "acme", "running", nil)

	r := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "prune", "--finished-before", "1h", "--batch", "2", "--database-url", url)
	if !strings.HasPrefix(r.Stdout, "batch 1: deleted 2 (total 2)\nbatch 2: deleted 1 (total 3)\nfinished_before: ") ||
		!strings.HasSuffix(r.Stdout, "\ndeleted: 3\n") {
		t.Fatalf("runs prune printed %q", r.Stdout)
	}
	testkit.CLIExpect(t, testkit.ExitOK, "deleted: 0", "runs", "prune", "--finished-before", "30d", "--database-url", url)
	cutoff := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	testkit.CLIExpect(t, testkit.ExitOK, "deleted: 1\n", "runs", "prune", "--finished-before", cutoff, "--database-url", url)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs`); got != 1 {
		t.Fatalf("runs left = %d, want the queued one", got)
	}

	unreachable := "postgres://docket@127.0.0.1:1/none?connect_timeout=5"
	for _, args := range [][]string{
		{"runs", "prune"},
		{"runs", "prune", "--finished-before", "soon"},
		{"runs", "prune", "--finished-before", "-1h"},
		{"runs", "prune", "--finished-before", "1h", "--batch", "0"},
		{"runs", "prune", "--finished-before", "1h", "--batch", "10001"},
		{"runs", "prune", "--finished-before", "1h", "--force"},
		{"runs", "prune", "--finished-before", "1h", "acme"},
	} {
		testkit.CLIExpect(t, testkit.ExitUsage, "", append(args, "--database-url", unreachable)...)
	}
}
