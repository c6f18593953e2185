package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A failed attempt with attempts left is released until exactly the
// commit time plus min(Backoff * Multiplier^(n-1), MaxBackoff) less the
// injected jitter, leaves admission, and records its error; the attempt
// numbered MaxAttempts fails the run with the whole history. The test makes
// each retried run due at once with plain SQL instead of waiting for it.
func TestWorkerRetryPolicyBacksOffExactlyThenFails(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	acme := docket.Tenant("acme")
	s.Insert("acme", "flaky")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval: 10 * time.Millisecond,
		Retry: docket.RetryPolicy{MaxAttempts: 4, Backoff: time.Hour, MaxBackoff: 3 * time.Hour, Multiplier: 2,
			Jitter: 0.5, Random: fixed(0.5)},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			attempts.add(job)
			return docket.Fail(fmt.Errorf("attempt %d failed", job.Attempt))
		}})
	// Jitter 0.5 drawn at 0.5 takes a quarter off: 1h, 2h and 4h capped at
	// 3h become 45m, 90m and 135m.
	for n, want := range []time.Duration{45 * time.Minute, 90 * time.Minute, 135 * time.Minute} {
		waitWritten(t, events, "flaky", "backoff", n+1)
		run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "flaky", n+1, testkit.RunErrors(1, "error", testkit.RunErrorTexts("attempt %d failed", 1, n+1)...)...)
		if run.Status != docket.StatusRunning || run.WakeAt == nil || run.WakeAt.Sub(run.UpdatedAt) != want ||
			run.LatestCheckpointType != "backoff" || !run.Errors[n].At.Equal(run.UpdatedAt) {
			t.Fatalf("after failed attempt %d: %+v, want running, due %v after its commit", n+1, run, want)
		}
		s.ExpectAdmission("acme", "flaky", docket.AdmissionInactive)
		testkit.ExecSQL(t, s.Pool, `update docket_runs set wake_at = now() where run_id = 'flaky' and claim_token is null`)
	}
	waitWritten(t, events, "flaky", "fail", 1)
	testkit.StopWorker(t, w, runResult)
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "flaky", 4, testkit.RunErrors(1, "error", testkit.RunErrorTexts("attempt %d failed", 1, 4)...)...)
	if run.Status != docket.StatusFailed || run.LatestCheckpointType != "fail" || !run.Errors[3].At.Equal(run.UpdatedAt) {
		t.Fatalf("after the last attempt: %+v, want failed by a fail verdict", run)
	}
	attempts.expect(t, "flaky", 1, 2, 3, 4)
}

// A recovered panic and the zero Result are failed attempts the policy
// retries, each recorded with its kind; a later Complete counts the fourth
// attempt and keeps the history. No record at info level or above carries
// an error text.
func TestWorkerRetryPolicyRetriesPanicsAndTheZeroResult(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "shaky")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	log := &testkit.WorkerLogRecorder{}
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook, Logger: slog.New(log),
		PollInterval: 10 * time.Millisecond,
		Retry:        docket.RetryPolicy{MaxAttempts: 5, Backoff: time.Microsecond, MaxBackoff: time.Microsecond},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch attempts.add(job) {
			case 1:
				panic("kaput: secret-panic-text")
			case 2:
				return docket.Result{}
			case 3:
				return docket.Fail(errors.New("boom: secret-error-text"))
			}
			return docket.Complete(nil)
		}})
	waitWritten(t, events, "shaky", "complete", 1)
	testkit.StopWorker(t, w, runResult)
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "shaky", 4,
		testkit.RunErrorEntry{Attempt: 1, Kind: "panic", Error: "kaput: secret-panic-text"},
		testkit.RunErrorEntry{Attempt: 2, Kind: "no_result", Error: "handler returned the zero Result"},
		testkit.RunErrorEntry{Attempt: 3, Kind: "error", Error: "boom: secret-error-text"})
	if run.Status != docket.StatusDone {
		t.Fatalf("run %+v, want done", run)
	}
	attempts.expect(t, "shaky", 1, 2, 3, 4)
	if n := testkit.WorkerCountEvents(events.All(), func(ev docket.WorkerEvent) bool {
		return ev.Kind == docket.EventVerdict && ev.Verdict == "backoff" && ev.Outcome == docket.VerdictWritten
	}); n != 3 {
		t.Fatalf("%d backoff verdicts written, want 3", n)
	}
	expectNoIdentities(t, log, "secret-panic-text", "secret-error-text", "shaky")
	if got := log.Find("docket worker handler panicked"); len(got) != 1 || got[0].Level != slog.LevelError || got[0].Attrs["result"] != "backoff" {
		t.Fatalf("panic records %+v, want one error record naming the backoff", got)
	}
}

// A policy of one attempt (RetryPolicy{MaxAttempts: 1}) retries nothing: a
// failure fails the run at once, with its error recorded.
func TestWorkerRetryOneAttemptPolicyFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	acme := docket.Tenant("acme")
	s.Insert("acme", "fails")
	s.Insert("acme", "panics")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 2, OnEvent: events.Hook,
		Retry: docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			attempts.add(job)
			if job.RunID == "panics" {
				panic("nil map")
			}
			return docket.Fail(errors.New("no such invoice"))
		}})
	events.WaitVerdicts(t, map[string]string{"fails": "fail", "panics": "panic"})
	testkit.StopWorker(t, w, runResult)
	for id, entry := range map[string]testkit.RunErrorEntry{"fails": {Attempt: 1, Kind: "error", Error: "no such invoice"}, "panics": {Attempt: 1, Kind: "panic", Error: "nil map"}} {
		if run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, id, 1, entry); run.Status != docket.StatusFailed {
			t.Fatalf("%s: %+v, want failed", id, run)
		}
		attempts.expect(t, id, 1)
	}
}

// Per-result overrides under a policy with attempts left: FailNow fails at
// once; RetryAfter waits exactly its delay, RetryAt until its time, and
// neither records an error unless given one with RetryAfterError or
// RetryAtError; all of them count the attempt.
func TestWorkerRetryPolicyPerResultOverrides(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 8)
	acme := docket.Tenant("acme")
	ids := []string{"fail-now", "retry-after", "retry-after-error", "retry-at-error"}
	for _, id := range ids {
		s.Insert("acme", id)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 4, OnEvent: events.Hook,
		Retry: docket.RetryPolicy{MaxAttempts: 5, Backoff: time.Hour},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch job.RunID {
			case "fail-now":
				return docket.FailNow(errors.New("fatal"))
			case "retry-after":
				return docket.RetryAfter(7 * time.Minute)
			case "retry-after-error":
				return docket.RetryAfterError(errors.New("rate limited"), 3*time.Minute)
			}
			return docket.RetryAtError(errors.New("maintenance"), at)
		}})
	events.WaitVerdicts(t, map[string]string{"fail-now": "fail", "retry-after": "retry", "retry-after-error": "retry", "retry-at-error": "retry"})
	testkit.StopWorker(t, w, runResult)

	if run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "fail-now", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "fatal"}); run.Status != docket.StatusFailed {
		t.Fatalf("fail-now: %+v, want failed", run)
	}
	for id, want := range map[string]struct {
		delay   time.Duration
		entries []testkit.RunErrorEntry
	}{
		"retry-after":       {7 * time.Minute, nil},
		"retry-after-error": {3 * time.Minute, []testkit.RunErrorEntry{{Attempt: 1, Kind: "error", Error: "rate limited"}}},
	} {
		run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, id, 1, want.entries...)
		if run.Status != docket.StatusRunning || run.WakeAt == nil || run.WakeAt.Sub(run.UpdatedAt) != want.delay {
			t.Fatalf("%s: %+v, want running, due %v after its commit", id, run, want.delay)
		}
	}
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "retry-at-error", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "maintenance"})
	if run.WakeAt == nil || !run.WakeAt.Equal(at) {
		t.Fatalf("retry-at-error due %v, want %v", run.WakeAt, at)
	}
}

// Continue restarts the attempt counter; Job.Checkpoint and Yield keep it;
// the history's attempt numbers follow the counter.
func TestWorkerRetryPolicyCountsSinceTheLastStep(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "steps")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval: 10 * time.Millisecond,
		Retry:        docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Microsecond},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch call := attempts.add(job); call {
			case 2:
				if err := job.Checkpoint(ctx, job.Step, []byte(`{"n":2}`)); err != nil {
					return docket.FailNow(err)
				}
				return docket.Yield()
			case 3:
				return docket.Continue(1, nil)
			default:
				return docket.Fail(fmt.Errorf("call %d", call))
			}
		}})
	waitWritten(t, events, "steps", "fail", 1)
	testkit.StopWorker(t, w, runResult)
	attempts.expect(t, "steps", 1, 2, 2, 1, 2, 3)
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "steps", 3,
		testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "call 1"}, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "call 4"}, testkit.RunErrorEntry{Attempt: 2, Kind: "error", Error: "call 5"}, testkit.RunErrorEntry{Attempt: 3, Kind: "error", Error: "call 6"})
	if run.Status != docket.StatusFailed || run.Step != 1 || string(run.State) != `{"n": 2}` {
		t.Fatalf("run %+v, want failed at step 1 with the checkpointed state", run)
	}
}

// The counter and the history live in the database: a worker stopped in
// the middle of an attempt hands the run back without counting it, and a
// new worker goes on from the persisted count to the last attempt.
func TestWorkerRetryPolicySurvivesAWorkerStop(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	acme := docket.Tenant("acme")
	s.Insert("acme", "durable")
	policy := docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Microsecond}
	first, second := newRPAttempts(), newRPAttempts()
	firstEvents := testkit.NewWorkerEvents()
	wa, runA := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: firstEvents.Hook,
		PollInterval: 10 * time.Millisecond, Retry: policy,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if first.add(job) == 1 {
				return docket.Fail(errors.New("first worker, attempt 1"))
			}
			<-ctx.Done()
			return docket.Fail(errors.New("first worker, interrupted"))
		}})
	firstEvents.WaitFor(t, "the second handler call", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventHandlerStarted }) == 2
	})
	// A stop whose drain window is over hands the run back at once; the
	// interrupted handler's verdict is then dropped.
	stopCtx, endDrain := context.WithCancel(context.Background())
	endDrain()
	if err := wa.Stop(stopCtx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := <-runA; err != nil {
		t.Fatalf("run: %v", err)
	}
	firstEvents.WaitFor(t, "the interrupted verdict dropped", func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventVerdict && ev.Verdict == "backoff" && ev.Outcome == docket.VerdictDropped
		}) == 1
	})
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "durable", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "first worker, attempt 1"})
	if run.Status != docket.StatusRunning || run.LatestCheckpointType != "stop" {
		t.Fatalf("after the stop: %+v, want running, handed back", run)
	}
	first.expect(t, "durable", 1, 2)

	secondEvents := testkit.NewWorkerEvents()
	wb, runB := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: secondEvents.Hook,
		PollInterval: 10 * time.Millisecond, Retry: policy,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			second.add(job)
			return docket.Fail(fmt.Errorf("second worker, attempt %d", job.Attempt))
		}})
	waitWritten(t, secondEvents, "durable", "fail", 1)
	testkit.StopWorker(t, wb, runB)
	second.expect(t, "durable", 2, 3)
	run = testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "durable", 3, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "first worker, attempt 1"},
		testkit.RunErrorEntry{Attempt: 2, Kind: "error", Error: "second worker, attempt 2"}, testkit.RunErrorEntry{Attempt: 3, Kind: "error", Error: "second worker, attempt 3"})
	if run.Status != docket.StatusFailed {
		t.Fatalf("run %+v, want failed", run)
	}
}

// An operator's RetryRun of a run that ran out of attempts restarts the
// counter, so the worker's policy gives it every attempt again, and keeps
// the history with the retry's own entry, which the new attempts extend.
func TestWorkerRetryRunRestartsTheAttemptsAndKeepsTheErrors(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	acme := docket.Tenant("acme")
	s.Insert("acme", "revived")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval: 10 * time.Millisecond,
		Retry:        docket.RetryPolicy{MaxAttempts: 2, Backoff: time.Microsecond, MaxBackoff: time.Microsecond},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			attempts.add(job)
			return docket.Fail(fmt.Errorf("try %d", job.Attempt))
		}})
	waitWritten(t, events, "revived", "fail", 1)
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "revived", 2, testkit.RunErrors(1, "error", "try 1", "try 2")...)
	retried, err := s.Client.RetryRun(testkit.Context(t), acme, "revived", docket.RetryRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if retried.Status != docket.StatusRunning || retried.Attempt != 0 || len(retried.Errors) != 3 || retried.Errors[2].Kind != docket.ErrorKindRetry {
		t.Fatalf("retried run %+v, want running with attempt 0, both errors and the retry's entry", retried)
	}
	waitWritten(t, events, "revived", "fail", 2)
	testkit.StopWorker(t, w, runResult)
	attempts.expect(t, "revived", 1, 2, 1, 2)
	history := testkit.RunErrors(1, "error", "try 1", "try 2")
	history = append(history, testkit.RunErrorEntry{Attempt: 2, Kind: "retry", Error: "retried by an operator from status failed"})
	history = append(history, testkit.RunErrors(1, "error", "try 1", "try 2")...)
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "revived", 2, history...)
}

// NewWorker refuses an invalid policy with a *RetryPolicyError naming the
// field, matching ErrInvalidConfig, and starts nothing: the due run is
// never claimed.
func TestWorkerRetryPolicyValidation(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "untouched")
	handler := func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }
	for field, policy := range map[string]docket.RetryPolicy{
		"MaxAttempts": {MaxAttempts: -1},
		"Backoff":     {Backoff: -time.Second},
		"MaxBackoff":  {MaxBackoff: -time.Second},
		"Multiplier":  {Multiplier: 0.5},
		"Jitter":      {Jitter: 1.5},
	} {
		w, err := docket.NewWorker(s.Client, docket.WorkerConfig{Concurrency: 1, Handler: handler, Retry: policy})
		var perr *docket.RetryPolicyError
		if w != nil || !errors.Is(err, docket.ErrInvalidConfig) || !errors.As(err, &perr) || perr.Field != field {
			t.Errorf("policy %+v: worker %v, error %v; want a RetryPolicyError on %s", policy, w, err, field)
		}
	}
	for name, policy := range map[string]docket.RetryPolicy{
		"negative jitter":        {Jitter: -0.1},
		"NaN jitter":             {Jitter: math.NaN()},
		"NaN multiplier":         {Multiplier: math.NaN()},
		"infinite multiplier":    {Multiplier: math.Inf(1)},
		"max below backoff":      {Backoff: time.Minute, MaxBackoff: time.Second},
		"max attempts too large": {MaxAttempts: math.MaxInt32 + 1},
	} {
		if w, err := docket.NewWorker(s.Client, docket.WorkerConfig{Concurrency: 1, Handler: handler, Retry: policy}); w != nil ||
			!errors.Is(err, docket.ErrInvalidConfig) || !errors.As(err, new(*docket.RetryPolicyError)) {
			t.Errorf("%s: worker %v, error %v; want a RetryPolicyError", name, w, err)
		}
	}
	if r := s.Row("untouched"); r.Token != nil || r.Attempts != 0 || r.Seq != 0 {
		t.Fatalf("a refused worker touched the run: %+v", r)
	}
}
