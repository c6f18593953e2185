package admin

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A refused run transition says, in the CLI's own terms, what state the run
// is in, what the action applies to and which docket command applies
// instead, and changes nothing.
func TestCLIRunTransitionMessages(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	url := pool.Config().ConnString()
	now := time.Now()
	runsInsert(t, url, "d1", "acme", "done", &now)
	runsInsert(t, url, "f1", "acme", "failed", &now)
	runsInsert(t, url, "c1", "acme", "cancelled", &now)
	runsInsert(t, url, "q1", "acme", "running", nil)
	runsInsert(t, url, "w1", "acme", "waiting", nil)
	runsInsert(t, url, "p1", "acme", "running", nil)
	testkit.ExecSQL(t, pool, `update docket_runs set wake_at = null, poisoned_at = now(), poison_reason = 'max_claim_attempts_exceeded' where run_id = 'p1'`)
	before := runsState(t, pool)

	const (
		cancelRule  = "cancel applies only to a run that is running, waiting or poisoned"
		resumeRule  = "resume applies only to a run that is waiting"
		retryRule   = "retry applies only to a run that is failed or cancelled"
		poisonRule  = "retry-poisoned applies only to a run that is poisoned"
		rerun       = "; use docket runs retry to run it again"
		rerunForced = "; use docket runs retry --force to run it again"
		revive      = "; use docket runs retry-poisoned to revive it"
		resume      = "; use docket runs resume to send it back to work"
	)
	for _, tc := range []struct {
		action, run, want string
	}{
		{"cancel", "d1", `run "d1" is done; ` + cancelRule + rerunForced},
		{"cancel", "f1", `run "f1" is failed; ` + cancelRule + rerun},
		{"cancel", "c1", `run "c1" is cancelled; ` + cancelRule + rerun},
		{"resume", "d1", `run "d1" is done; ` + resumeRule + rerunForced},
		{"resume", "q1", `run "q1" is running; ` + resumeRule},
		{"resume", "p1", `run "p1" is poisoned; ` + resumeRule + revive},
		{"retry", "q1", `run "q1" is running; ` + retryRule},
		{"retry", "w1", `run "w1" is waiting; ` + retryRule + resume},
		{"retry", "d1", `run "d1" is done; ` + retryRule + rerunForced},
		{"retry", "p1", `run "p1" is poisoned; ` + retryRule + revive},
		{"retry-poisoned", "q1", `run "q1" is running; ` + poisonRule},
		{"retry-poisoned", "f1", `run "f1" is failed; ` + poisonRule + rerun},
		{"retry-poisoned", "w1", `run "w1" is waiting; ` + poisonRule + resume},
	} {
		r := testkit.CLIExpect(t, testkit.ExitUsage, "", "runs", tc.action, "acme", tc.run, "--database-url", url)
		if want := "docket: runs " + tc.action + ": " + tc.want + "\n"; r.Stderr != want || r.Stdout != "" {
			t.Errorf("docket runs %s acme %s printed\nstdout %q\nstderr %q\nwant stderr %q", tc.action, tc.run, r.Stdout, r.Stderr, want)
		}
	}
	if after := runsState(t, pool); after != before {
		t.Fatalf("refused transitions changed the runs:\nbefore %s\nafter  %s", before, after)
	}
}

// runsState is every run's status, poison and update time, in id order.
func runsState(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var state string
	if err := pool.QueryRow(testkit.Context(t), `select string_agg(run_id || ' ' || status || ' ' || (poisoned_at is not null)::text
		|| ' ' || updated_at::text, ', ' order by id) from docket_runs`).Scan(&state); err != nil {
		t.Fatal(err)
	}
	return state
}

// "docket schedules add" needs --state, as NewSchedule needs State: the
// one rule of both.
func TestCLISchedulesAddNeedsState(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	r := testkit.CLIExpect(t, testkit.ExitUsage, "", "schedules", "add", "acme", "nightly", "--every", "1h", "--graph", "g", "--graph-hash", "v1",
		"--database-url", pool.Config().ConnString())
	if want := "docket: schedules add: missing --state JSON: the state document of every run a tick inserts, such as --state '{}'\n"; !strings.HasPrefix(r.Stderr, want) {
		t.Fatalf("schedules add without --state printed\n%q\nwant it to start with\n%q", r.Stderr, want)
	}
	client := testkit.OpenClient(t, pool, docket.Config{})
	if _, err := client.AddSchedule(testkit.Context(t), docket.NewSchedule{Scope: docket.Tenant("acme"), Name: "nightly",
		GraphID: "g", GraphHash: "v1", Every: time.Hour}); err == nil || err.Error() != "docket: invalid argument: state is empty; use a JSON value such as {}" {
		t.Fatalf("AddSchedule without State: %v", err)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_schedules`); n != 0 {
		t.Fatalf("a refused schedules add left %d schedule(s)", n)
	}
}

// hardCodedVersion matches a schema version written into user-facing text.
var hardCodedVersion = regexp.MustCompile(`\bV[0-9]+\b|[Ss]chema version [0-9]+|version [0-9]+ (has|keeps)`)

// The help texts name no schema version: the binary's newest is what
// "docket version" prints, from the embedded migrations.
func TestCLIHelpNamesNoSchemaVersion(t *testing.T) {
	t.Parallel()
	texts := []string{testkit.CLIExpect(t, testkit.ExitOK, "", "help").Stdout}
	for cmd, actions := range map[string][]string{
		"migrate": {"up"}, "policy": {"get"}, "runs": {"list", "show", "cancel", "resume", "retry-poisoned", "retry", "prune"},
		"tenants": {"list", "show"}, "schedules": {"list", "add", "pause", "resume", "remove"}, "console": nil, "demo": nil, "version": nil,
	} {
		texts = append(texts, testkit.CLIExpect(t, testkit.ExitOK, "", cmd, "--help").Stdout)
		for _, action := range actions {
			texts = append(texts, testkit.CLIExpect(t, testkit.ExitOK, "", cmd, action, "--help").Stdout)
		}
	}
	for _, text := range texts {
		if m := hardCodedVersion.FindString(text); m != "" {
			t.Errorf("help text names the schema version %q:\n%s", m, text)
		}
	}
}
