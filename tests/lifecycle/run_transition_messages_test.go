package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The facade's refusals of a run transition name the run's state, what the
// transition applies to and the Go call that applies instead, and match
// ErrInvalidTransition as *TransitionError.
func TestRunTransitionRefusalsNameTheGoCall(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	for _, id := range []string{"q1", "w1", "d1", "f1", "p1"} {
		s.Insert("acme", id)
	}
	testkit.ExecSQL(t, s.Pool, `update docket_runs set status = 'waiting', wake_at = null where run_id = 'w1'`)
	testkit.ExecSQL(t, s.Pool, `update docket_runs set status = 'done', wake_at = null, finished_at = now() where run_id = 'd1'`)
	testkit.ExecSQL(t, s.Pool, `update docket_runs set status = 'failed', wake_at = null, finished_at = now() where run_id = 'f1'`)
	testkit.ExecSQL(t, s.Pool, `update docket_runs set wake_at = null, poisoned_at = now(), poison_reason = 'max_claim_attempts_exceeded' where run_id = 'p1'`)
	acme := docket.Tenant("acme")
	retry := func(id string) error {
		_, err := s.Client.RetryRun(ctx, acme, id, docket.RetryRunOptions{})
		return err
	}
	revive := func(id string) error {
		_, err := s.Client.RetryPoisonedRun(ctx, acme, id)
		return err
	}
	check := func(tr docket.Transition) func(string) error {
		return func(id string) error {
			run, err := s.Client.FetchRun(ctx, acme, id)
			if err != nil {
				t.Fatal(err)
			}
			return tr.Check(run)
		}
	}
	const (
		retryRule  = "retry applies only to a run that is failed or cancelled"
		poisonRule = "retry-poisoned applies only to a run that is poisoned"
	)
	for _, tc := range []struct {
		what string
		call func(string) error
		run  string
		want string
	}{
		{"RetryRun", retry, "q1", `run "q1" is running; ` + retryRule},
		{"RetryRun", retry, "w1", `run "w1" is waiting; ` + retryRule + "; use MutateRun with StatusRunning to send it back to work"},
		{"RetryRun", retry, "d1", `run "d1" is done; ` + retryRule + "; use RetryRun with Force to run it again"},
		{"RetryRun", retry, "p1", `run "p1" is poisoned; ` + retryRule + "; use RetryPoisonedRun to revive it"},
		{"RetryPoisonedRun", revive, "q1", `run "q1" is running; ` + poisonRule},
		{"RetryPoisonedRun", revive, "f1", `run "f1" is failed; ` + poisonRule + "; use RetryRun to run it again"},
		{"TransitionCancel.Check", check(docket.TransitionCancel), "d1",
			`run "d1" is done; cancel applies only to a run that is running, waiting or poisoned; use RetryRun with Force to run it again`},
		{"TransitionResume.Check", check(docket.TransitionResume), "p1",
			`run "p1" is poisoned; resume applies only to a run that is waiting; use RetryPoisonedRun to revive it`},
	} {
		err := tc.call(tc.run)
		var te *docket.TransitionError
		if want := "docket: invalid run transition: " + tc.want; err == nil || err.Error() != want ||
			!errors.Is(err, docket.ErrInvalidTransition) || !errors.As(err, &te) || te.RunID != tc.run {
			t.Errorf("%s of %s: %v\nwant %s", tc.what, tc.run, err, want)
		}
	}
	for _, tc := range []struct {
		tr   docket.Transition
		runs string
	}{
		{docket.TransitionCancel, "q1 w1 p1"}, {docket.TransitionResume, "w1"},
		{docket.TransitionRetry, "f1"}, {docket.TransitionRetryPoisoned, "p1"},
	} {
		var allowed []string
		for _, id := range []string{"q1", "w1", "d1", "f1", "p1"} {
			run, err := s.Client.FetchRun(ctx, acme, id)
			if err != nil {
				t.Fatal(err)
			}
			if tc.tr.Allows(run) != (tc.tr.Check(run) == nil) {
				t.Errorf("%s: Allows and Check disagree on %s", tc.tr, id)
			}
			if tc.tr.Allows(run) {
				allowed = append(allowed, id)
			}
		}
		if got := strings.Join(allowed, " "); got != tc.runs {
			t.Errorf("%s allows %q, want %q", tc.tr, got, tc.runs)
		}
	}
}
