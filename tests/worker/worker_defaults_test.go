package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// dbClock reads the database's clock_timestamp(), the clock the stored
// commit times and wake times are taken by.
func dbClock(t *testing.T, s *testkit.RunStore) time.Time {
	t.Helper()
	var now time.Time
	if err := s.Pool.QueryRow(testkit.Context(t), `select clock_timestamp()`).Scan(&now); err != nil {
		t.Errorf("read the database clock: %v", err)
	}
	return now
}

// upTo is 1, 2... n.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// insertGraphRun inserts a run of graph id runID for acme with state {}.
func insertGraphRun(t *testing.T, s *testkit.RunStore, runID string) {
	t.Helper()
	if _, err := s.Client.InsertRun(testkit.Context(t), docket.NewRun{RunID: runID, Scope: docket.Tenant("acme"),
		GraphID: runID, GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
}

// Under the zero WorkerConfig.Retry a failed attempt is retried: a handler
// failing twice, then succeeding, leaves the run done with Attempt 3 (the
// three handler attempts) and the two failures in its history, and each
// retry started no earlier than the default backoff less its largest
// jitter (1s, then 2s, each at most a tenth shorter) after its failure.
func TestWorkerRetriesByDefault(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "flaky")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	var mu sync.Mutex
	var started []time.Time
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			mu.Lock()
			started = append(started, dbClock(t, s))
			mu.Unlock()
			if n := attempts.add(job); n <= 2 {
				return docket.Fail(fmt.Errorf("attempt %d failed", n))
			}
			return docket.Complete(nil)
		}})
	events.WaitWritten(t, "complete", "flaky")
	testkit.StopWorker(t, w, runResult)

	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "flaky", 3,
		testkit.RunErrors(1, "error", "attempt 1 failed", "attempt 2 failed")...)
	if run.Status != docket.StatusDone || run.LatestCheckpointType != "complete" {
		t.Fatalf("run %+v, want done by a complete verdict", run)
	}
	attempts.expect(t, "flaky", 1, 2, 3)
	if got := testkit.WorkerCountEvents(events.All(), func(ev docket.WorkerEvent) bool {
		return ev.Kind == docket.EventVerdict && ev.RunID == "flaky" && ev.Verdict == "backoff" && ev.Outcome == docket.VerdictWritten
	}); got != 2 {
		t.Fatalf("%d backoff verdicts written, want 2", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for i, least := range []time.Duration{900 * time.Millisecond, 1800 * time.Millisecond} {
		if waited := started[i+1].Sub(run.Errors[i].At); waited < least {
			t.Fatalf("attempt %d started %v after failure %d, want at least %v", i+2, waited, i+1, least)
		}
	}
}

// Every handler call has a timeout: the Worker's HandlerTimeout, one minute
// when zero, or the graph's own. A handler still running when it passes
// has failed its attempt with the timeout's error, whatever it returns,
// retried under the policy; the last attempt fails the run with checkpoint
// type "timeout". The handler's context ends with the *HandlerTimeoutError
// as its cause and context.DeadlineExceeded as its error.
func TestWorkerHandlerTimeoutFailsTheAttempt(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "stuck")
	events := testkit.NewWorkerEvents()
	causes := make(chan error, 2)
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval:   10 * time.Millisecond,
		HandlerTimeout: 50 * time.Millisecond,
		Retry:          docket.RetryPolicy{MaxAttempts: 2, Backoff: time.Microsecond, MaxBackoff: time.Microsecond},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			<-ctx.Done()
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				causes <- fmt.Errorf("ctx.Err() = %v", ctx.Err())
			} else {
				causes <- context.Cause(ctx)
			}
			return docket.Complete(nil) // too late: the attempt failed
		}})
	events.WaitWritten(t, "timeout", "stuck")
	testkit.StopWorker(t, w, runResult)
	for range 2 {
		cause := <-causes
		if timeout, ok := errors.AsType[*docket.HandlerTimeoutError](cause); !ok || timeout.Timeout != 50*time.Millisecond ||
			!errors.Is(cause, docket.ErrHandlerTimeout) {
			t.Fatalf("the handler's context ended with cause %v, want a *HandlerTimeoutError of 50ms", cause)
		}
	}
	text := "docket: handler timed out after 50ms"
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "stuck", 2,
		testkit.RunErrors(1, "error", text, text)...)
	if run.Status != docket.StatusFailed || run.LatestCheckpointType != "timeout" {
		t.Fatalf("run %+v, want failed by a timeout", run)
	}
	waitWritten(t, events, "stuck", "backoff", 1)

	// A graph's HandlerTimeout replaces the Worker's; a graph without one
	// has the Worker's, here the default minute.
	insertGraphRun(t, s, "quick")
	insertGraphRun(t, s, "bounded")
	handlers := docket.NewHandlers()
	if err := docket.Register(handlers, "quick", func(ctx context.Context, _ *docket.Job, _ struct{}) docket.Result {
		<-ctx.Done()
		return docket.Fail(ctx.Err())
	}, docket.HandlerTimeout(20*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	deadlines := make(chan time.Duration, 1)
	if err := docket.Register(handlers, "bounded", func(ctx context.Context, _ *docket.Job, _ struct{}) docket.Result {
		deadline, _ := ctx.Deadline()
		deadlines <- time.Until(deadline)
		return docket.Complete(nil)
	}); err != nil {
		t.Fatal(err)
	}
	events = testkit.NewWorkerEvents()
	w, runResult = testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 2, OnEvent: events.Hook,
		Handlers: handlers, Retry: docket.RetryPolicy{MaxAttempts: 1}})
	events.WaitVerdicts(t, map[string]string{"quick": "timeout", "bounded": "complete"})
	testkit.StopWorker(t, w, runResult)
	testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "quick", 1,
		testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "docket: handler timed out after 20ms"})
	if left := <-deadlines; left <= 59*time.Second || left > time.Minute {
		t.Fatalf("the default timeout left %v, want DefaultHandlerTimeout (1m) from the call's start", left)
	}
}

// Snooze makes the run due again after exactly its duration without
// spending an attempt: two snoozes, then a success, leave the run done with
// Attempt 1 (the one attempt that completed), no error entry, and every
// call saw Job.Attempt 1.
func TestWorkerSnoozeSpendsNoAttempt(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "early")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval: 10 * time.Millisecond,
		Retry:        docket.RetryPolicy{MaxAttempts: 1},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			switch attempts.add(job) {
			case 1:
				return docket.Snooze(time.Hour)
			case 2:
				return docket.Snooze(time.Millisecond)
			}
			return docket.Complete(nil)
		}})
	waitWritten(t, events, "early", "snooze", 1)
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "early", 0)
	if run.Status != docket.StatusRunning || run.LatestCheckpointType != "snooze" || run.WakeAt == nil ||
		run.WakeAt.Sub(run.UpdatedAt) != time.Hour {
		t.Fatalf("after the first snooze: %+v, want running, due an hour after its commit", run)
	}
	s.ExpectAdmission("acme", "early", docket.AdmissionInactive)
	testkit.ExecSQL(t, s.Pool, `update docket_runs set wake_at = now() where run_id = 'early' and claim_token is null`)
	events.WaitWritten(t, "complete", "early")
	testkit.StopWorker(t, w, runResult)
	run = testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "early", 1)
	if run.Status != docket.StatusDone {
		t.Fatalf("run %+v, want done", run)
	}
	attempts.expect(t, "early", 1, 1, 1)
	waitWritten(t, events, "early", "snooze", 2)
}

// A retry due before the next poll wakes the Worker at its due time: with
// an hour's PollInterval and a 50 ms backoff the retried run completes, and
// its second attempt started no earlier than the failure's commit plus the
// backoff, by the database's clock.
func TestWorkerWakesForABackoffShorterThanThePoll(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "soon")
	attempts := newRPAttempts()
	events := testkit.NewWorkerEvents()
	secondStarted := make(chan time.Time, 1)
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		PollInterval: time.Hour,
		Retry:        docket.RetryPolicy{MaxAttempts: 2, Backoff: 50 * time.Millisecond, MaxBackoff: 50 * time.Millisecond},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if attempts.add(job) == 1 {
				return docket.Fail(errors.New("not yet"))
			}
			secondStarted <- dbClock(t, s)
			return docket.Complete(nil)
		}})
	events.WaitWritten(t, "complete", "soon")
	testkit.StopWorker(t, w, runResult)
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "soon", 2,
		testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "not yet"})
	if started, due := <-secondStarted, run.Errors[0].At.Add(50*time.Millisecond); started.Before(due) {
		t.Fatalf("the retry started at %v, before its due time %v", started, due)
	}
	attempts.expect(t, "soon", 1, 2)
}

// Middleware wraps every handler call: the Worker's outermost, in order,
// then the graph's, then the typed handler. Each sees the Job and the
// Result, and may replace it; a panic in a middleware is a failed attempt
// recorded as a panic, like a handler's.
func TestWorkerMiddlewareWrapsHandlers(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	var mu sync.Mutex
	var calls []string
	record := func(call string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, call)
	}
	tag := func(name string) docket.Middleware {
		return func(next docket.Handler) docket.Handler {
			return func(ctx context.Context, job *docket.Job) docket.Result {
				record(name + " in " + job.RunID)
				r := next(ctx, job)
				record(name + " out " + r.Kind())
				return r
			}
		}
	}
	rescue := func(next docket.Handler) docket.Handler {
		return func(ctx context.Context, job *docket.Job) docket.Result {
			r := next(ctx, job)
			if r.Kind() == "fail" {
				return docket.Complete(json.RawMessage(fmt.Sprintf(`{"rescued": %q}`, r.Err())))
			}
			return r
		}
	}
	kaput := func(docket.Handler) docket.Handler {
		return func(context.Context, *docket.Job) docket.Result { panic("middleware kaput") }
	}
	handlers := docket.NewHandlers()
	type order struct {
		Item string `json:"item"`
	}
	if err := docket.Register(handlers, "rescued", func(_ context.Context, job *docket.Job, o order) docket.Result {
		record("handler " + job.RunID + " " + o.Item)
		return docket.Fail(errors.New("gateway down"))
	}, docket.HandlerMiddleware(rescue), docket.HandlerMiddleware(tag("graph"))); err != nil {
		t.Fatal(err)
	}
	if err := docket.Register(handlers, "broken", func(context.Context, *docket.Job, order) docket.Result {
		record("unreachable")
		return docket.Complete(nil)
	}, docket.HandlerMiddleware(kaput)); err != nil {
		t.Fatal(err)
	}
	for _, run := range []docket.NewRun{
		{RunID: "m-1", Scope: docket.Tenant("acme"), GraphID: "rescued", GraphHash: "v1", State: json.RawMessage(`{"item": "book"}`)},
		{RunID: "m-2", Scope: docket.Tenant("acme"), GraphID: "broken", GraphHash: "v1", State: json.RawMessage(`{}`)},
	} {
		if _, err := s.Client.InsertRun(testkit.Context(t), run); err != nil {
			t.Fatal(err)
		}
	}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook,
		Handlers: handlers, Middleware: []docket.Middleware{tag("outer"), tag("inner")},
		Retry: docket.RetryPolicy{MaxAttempts: 1}})
	events.WaitVerdicts(t, map[string]string{"m-1": "complete", "m-2": "panic"})
	testkit.StopWorker(t, w, runResult)

	mu.Lock()
	got := slices.Clone(calls)
	mu.Unlock()
	want := []string{"outer in m-1", "inner in m-1", "graph in m-1", "handler m-1 book", "graph out fail",
		"inner out complete", "outer out complete",
		"outer in m-2", "inner in m-2"}
	if !slices.Equal(got, want) {
		t.Fatalf("calls %q, want %q", got, want)
	}
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "m-1", 1)
	if run.Status != docket.StatusDone || string(run.State) != `{"rescued": "gateway down"}` {
		t.Fatalf("m-1: %+v (state %s), want done with the rescued state", run, run.State)
	}
	run = testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "m-2", 1,
		testkit.RunErrorEntry{Attempt: 1, Kind: docket.ErrorKindPanic, Error: "middleware kaput"})
	if run.Status != docket.StatusFailed || run.LatestCheckpointType != "panic" {
		t.Fatalf("m-2: %+v, want failed by the middleware's panic", run)
	}
}

// A run's own MaxAttempts, given at insert by InsertRun, InsertRunTx or
// InsertRuns, replaces the policy's: under a policy of 3 attempts, runs
// inserted with 1, 2 and 4 fail at their own last attempt, a run inserted
// without one at the policy's; the Job and the Run show the run's own.
func TestWorkerRunMaxAttemptsOverridesThePolicy(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	acme := docket.Tenant("acme")
	newRun := func(id string, maxAttempts int) docket.NewRun {
		return docket.NewRun{RunID: id, Scope: acme, GraphID: "graph", GraphHash: "v1", State: json.RawMessage(`{}`), MaxAttempts: maxAttempts}
	}
	if _, err := s.Client.InsertRun(ctx, newRun("two", 2)); err != nil {
		t.Fatal(err)
	}
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.InsertRunTx(ctx, tx, newRun("one", 1)); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.InsertRuns(ctx, []docket.NewRun{newRun("four", 4), newRun("policy", 0)}); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"one": 1, "two": 2, "policy": 3, "four": 4}
	own := map[string]int{"one": 1, "two": 2, "policy": 0, "four": 4}
	attempts := newRPAttempts()
	var mu sync.Mutex
	seen := map[string]int{}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 4, OnEvent: events.Hook,
		PollInterval: 10 * time.Millisecond,
		Retry:        docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Microsecond},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			mu.Lock()
			seen[job.RunID] = job.MaxAttempts
			mu.Unlock()
			return docket.Fail(fmt.Errorf("attempt %d failed", attempts.add(job)))
		}})
	events.WaitWritten(t, "fail", "one", "two", "policy", "four")
	testkit.StopWorker(t, w, runResult)
	for id, n := range want {
		run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, id, n,
			testkit.RunErrors(1, "error", testkit.RunErrorTexts("attempt %d failed", 1, n)...)...)
		if run.Status != docket.StatusFailed || run.MaxAttempts != own[id] || seen[id] != own[id] {
			t.Fatalf("%s: %+v, Job.MaxAttempts %d; want failed after %d attempts, MaxAttempts %d", id, run, seen[id], n, own[id])
		}
		attempts.expect(t, id, upTo(n)...)
	}
}
