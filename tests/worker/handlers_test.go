package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// invoice and thumbnail are the states of two graphs of the registry tests.
type invoice struct {
	Invoice int `json:"invoice"`
}

type thumbnail struct {
	URL   string `json:"url"`
	Width int    `json:"width"`
	Done  bool   `json:"done"`
}

// seen records what typed handlers were called with, per run, in call order.
type seen struct {
	mu    sync.Mutex
	calls map[string][]string
}

func newSeen() *seen { return &seen{calls: map[string][]string{}} }

// add records one call of runID as text.
func (s *seen) add(runID, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[runID] = append(s.calls[runID], fmt.Sprintf(format, args...))
}

// expect fails unless runID's calls were exactly want.
func (s *seen) expect(t *testing.T, runID string, want ...string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	got := s.calls[runID]
	if len(got) != len(want) {
		t.Fatalf("%s: calls %q, want %q", runID, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: calls %q, want %q", runID, got, want)
		}
	}
}

// register registers handler for graphID in h, failing the test on an error.
func register[T any](t *testing.T, h *docket.Handlers, graphID string, handler docket.TypedHandler[T], opts ...docket.HandlerOption) {
	t.Helper()
	if err := docket.Register(h, graphID, handler, opts...); err != nil {
		t.Fatalf("register %s: %v", graphID, err)
	}
}

// insertTyped inserts a due run of acme with state encoded by NewTypedRun.
func insertTyped[T any](t *testing.T, s *testkit.RunStore, runID, graphID string, state T) {
	t.Helper()
	run, err := docket.NewTypedRun(docket.NewRun{RunID: runID, Scope: docket.Tenant("acme"), GraphID: graphID, GraphHash: "v1"}, state)
	if err != nil {
		t.Fatalf("new typed run %s: %v", runID, err)
	}
	if _, err := s.Client.InsertRun(testkit.Context(t), run); err != nil {
		t.Fatalf("insert %s: %v", runID, err)
	}
}

// insertRaw inserts a due run of acme with state as it is.
func insertRaw(t *testing.T, s *testkit.RunStore, runID, graphID, state string) {
	t.Helper()
	if _, err := s.Client.InsertRun(testkit.Context(t), docket.NewRun{RunID: runID, Scope: docket.Tenant("acme"),
		GraphID: graphID, GraphHash: "v1", State: json.RawMessage(state)}); err != nil {
		t.Fatalf("insert %s: %v", runID, err)
	}
}

// expectRun fails unless runID is stored with status, step and state (as
// jsonb prints it).
func expectRun(t *testing.T, s *testkit.RunStore, runID string, status docket.RunStatus, step int, state string) {
	t.Helper()
	run, err := s.Client.FetchRun(testkit.Context(t), docket.Tenant("acme"), runID)
	if err != nil {
		t.Fatalf("fetch %s: %v", runID, err)
	}
	if run.Status != status || run.Step != step || string(run.State) != state {
		t.Fatalf("%s is %s at step %d with %s; want %s at step %d with %s", runID, run.Status, run.Step, run.State, status, step, state)
	}
}

// Two graphs with different state types each get their own handler with the
// state decoded into their own type, and TypedComplete writes the new state.
func TestWorkerHandlersRunEachGraphWithItsDecodedState(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	calls := newSeen()
	h := docket.NewHandlers()
	register(t, h, "send-invoice", func(_ context.Context, job *docket.Job, state invoice) docket.Result {
		calls.add(job.RunID, "%s %+v", job.GraphID, state)
		return docket.TypedComplete(invoice{Invoice: state.Invoice + 1})
	})
	register(t, h, "thumbnail", func(_ context.Context, job *docket.Job, state thumbnail) docket.Result {
		calls.add(job.RunID, "%s %+v", job.GraphID, state)
		state.Done = true
		return docket.TypedComplete(state)
	})
	insertTyped(t, s, "inv-1", "send-invoice", invoice{Invoice: 42})
	insertTyped(t, s, "thumb-1", "thumbnail", thumbnail{URL: "a.png", Width: 64})
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 2, OnEvent: events.Hook, Handlers: h})
	events.WaitWritten(t, "complete", "inv-1", "thumb-1")
	testkit.StopWorker(t, w, runResult)
	calls.expect(t, "inv-1", "send-invoice {Invoice:42}")
	calls.expect(t, "thumb-1", "thumbnail {URL:a.png Width:64 Done:false}")
	expectRun(t, s, "inv-1", docket.StatusDone, 0, `{"invoice": 43}`)
	expectRun(t, s, "thumb-1", docket.StatusDone, 0, `{"url": "a.png", "done": true, "width": 64}`)
}

// TypedCheckpoint writes the typed state back in the same claim, and the
// next call after a Continue decodes it; the call after a TypedContinue
// decodes that one's state.
func TestWorkerHandlersTypedCheckpointThenContinue(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	calls := newSeen()
	h := docket.NewHandlers()
	register(t, h, "send-invoice", func(ctx context.Context, job *docket.Job, state invoice) docket.Result {
		calls.add(job.RunID, "step %d %+v", job.Step, state)
		switch job.Step {
		case 0:
			if err := docket.TypedCheckpoint(ctx, job, 1, invoice{Invoice: state.Invoice + 1}); err != nil {
				return docket.Fail(err)
			}
			calls.add(job.RunID, "checkpointed step %d %s", job.Step, job.State)
			return docket.Continue(2, nil) // keeps the checkpointed document
		case 2:
			return docket.TypedContinue(3, invoice{Invoice: state.Invoice * 10})
		}
		return docket.Complete(nil)
	})
	insertTyped(t, s, "inv-1", "send-invoice", invoice{Invoice: 1})
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook, Handlers: h})
	events.WaitWritten(t, "complete", "inv-1")
	testkit.StopWorker(t, w, runResult)
	calls.expect(t, "inv-1",
		"step 0 {Invoice:1}",
		`checkpointed step 1 {"invoice": 2}`,
		"step 2 {Invoice:2}",
		"step 3 {Invoice:20}")
	expectRun(t, s, "inv-1", docket.StatusDone, 3, `{"invoice": 20}`)
}

// A run whose graph has no handler fails its attempt with exactly the
// no-handler entry; under MaxAttempts 2 it is retried once, then failed with
// two entries. The registered graph's handler is never called for it.
func TestWorkerHandlersUnregisteredGraphIsRetriedThenFailed(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	calls := newSeen()
	h := docket.NewHandlers()
	register(t, h, "send-invoice", func(_ context.Context, job *docket.Job, state invoice) docket.Result {
		calls.add(job.RunID, "%+v", state)
		return docket.Complete(nil)
	})
	insertRaw(t, s, "orphan", "refund", `{"invoice": 7}`)
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook, Handlers: h,
		PollInterval: 10 * time.Millisecond, Retry: docket.RetryPolicy{MaxAttempts: 2, Backoff: time.Hour}})
	acme := docket.Tenant("acme")
	entry := `no handler registered for graph "refund"`
	waitWritten(t, events, "orphan", "backoff", 1)
	if run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "orphan", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: entry}); run.Status != docket.StatusRunning || run.LatestCheckpointType != "backoff" {
		t.Fatalf("after the first attempt: %+v, want running after a backoff", run)
	}
	testkit.ExecSQL(t, s.Pool, `update docket_runs set wake_at = now() where run_id = 'orphan' and claim_token is null`)
	waitWritten(t, events, "orphan", "fail", 1)
	testkit.StopWorker(t, w, runResult)
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "orphan", 2, testkit.RunErrors(1, "error", entry, entry)...)
	if run.Status != docket.StatusFailed || run.LatestCheckpointType != "fail" || string(run.State) != `{"invoice": 7}` {
		t.Fatalf("after the last attempt: %+v, want failed by a fail verdict, state kept", run)
	}
	calls.expect(t, "orphan")
}

// A state that does not decode into the registered type fails the attempt
// with the decode error, without calling the handler.
func TestWorkerHandlersStateThatDoesNotDecodeFails(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	calls := newSeen()
	h := docket.NewHandlers()
	register(t, h, "send-invoice", func(_ context.Context, job *docket.Job, state invoice) docket.Result {
		calls.add(job.RunID, "%+v", state)
		return docket.Complete(nil)
	})
	insertRaw(t, s, "bad", "send-invoice", `{"invoice": "forty-two"}`)
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 1, OnEvent: events.Hook, Handlers: h,
		Retry: docket.RetryPolicy{MaxAttempts: 1}})
	events.WaitWritten(t, "fail", "bad")
	testkit.StopWorker(t, w, runResult)
	// The decoder's own text, so the test does not depend on its wording.
	decodeErr := json.Unmarshal([]byte(`{"invoice": "forty-two"}`), new(invoice))
	if decodeErr == nil {
		t.Fatal("the state decoded")
	}
	want := `decode the state of graph "send-invoice" into worker.invoice: ` + decodeErr.Error()
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "bad", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: want})
	if run.Status != docket.StatusFailed {
		t.Fatalf("run %+v, want failed", run)
	}
	calls.expect(t, "bad")
}

// HandlerTimeout ends the handler's context with context.DeadlineExceeded,
// and the attempt fails with the timeout's error whatever the handler
// returns (here its own Fail); a graph without one gets the Worker's,
// here none.
func TestWorkerHandlersTimeoutEndsTheHandlerContext(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	calls := newSeen()
	h := docket.NewHandlers()
	register(t, h, "slow", func(ctx context.Context, job *docket.Job, _ invoice) docket.Result {
		_, hasDeadline := ctx.Deadline()
		<-ctx.Done()
		calls.add(job.RunID, "deadline %t, err %v, cause is DeadlineExceeded %t", hasDeadline, ctx.Err(),
			errors.Is(context.Cause(ctx), context.DeadlineExceeded))
		return docket.Fail(ctx.Err())
	}, docket.HandlerTimeout(50*time.Millisecond))
	register(t, h, "untimed", func(ctx context.Context, job *docket.Job, _ invoice) docket.Result {
		_, hasDeadline := ctx.Deadline()
		calls.add(job.RunID, "deadline %t", hasDeadline)
		return docket.Complete(nil)
	})
	insertTyped(t, s, "slow-1", "slow", invoice{})
	insertTyped(t, s, "untimed-1", "untimed", invoice{})
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 2, OnEvent: events.Hook, Handlers: h,
		HandlerTimeout: docket.NoHandlerTimeout, Retry: docket.RetryPolicy{MaxAttempts: 1}})
	events.WaitVerdicts(t, map[string]string{"slow-1": "timeout", "untimed-1": "complete"})
	testkit.StopWorker(t, w, runResult)
	calls.expect(t, "slow-1", "deadline true, err context deadline exceeded, cause is DeadlineExceeded true")
	calls.expect(t, "untimed-1", "deadline false")
	testkit.RunErrorExpect(t, s.Pool, s.Client, docket.Tenant("acme"), "slow-1", 1,
		testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "docket: handler timed out after 50ms"})
}

// A graph's HandlerRetry beats the Worker's RetryPolicy both ways, for Fail
// and for a panic; a graph without one follows the Worker's.
func TestWorkerHandlersRetryOverrideBeatsTheWorkerPolicy(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 8)
	attempts := newRPAttempts()
	h := docket.NewHandlers()
	fail := func(_ context.Context, job *docket.Job, _ invoice) docket.Result {
		attempts.add(job)
		return docket.Fail(fmt.Errorf("attempt %d failed", job.Attempt))
	}
	register(t, h, "strict", fail, docket.HandlerRetry(docket.RetryPolicy{MaxAttempts: 1}))
	register(t, h, "patient", fail, docket.HandlerRetry(docket.RetryPolicy{MaxAttempts: 4, Backoff: time.Microsecond}))
	register(t, h, "plain", fail)
	register(t, h, "panics", func(_ context.Context, job *docket.Job, _ invoice) docket.Result {
		attempts.add(job)
		panic(fmt.Sprintf("attempt %d panicked", job.Attempt))
	}, docket.HandlerRetry(docket.RetryPolicy{MaxAttempts: 2, Backoff: time.Microsecond}))
	for _, graph := range []string{"strict", "patient", "plain", "panics"} {
		insertTyped(t, s, graph+"-1", graph, invoice{})
	}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, s.Client, docket.WorkerConfig{Concurrency: 4, OnEvent: events.Hook, Handlers: h,
		PollInterval: 10 * time.Millisecond,
		Retry:        docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Microsecond, MaxBackoff: time.Microsecond}})
	events.WaitVerdicts(t, map[string]string{"strict-1": "fail", "patient-1": "fail", "plain-1": "fail", "panics-1": "panic"})
	testkit.StopWorker(t, w, runResult)
	acme := docket.Tenant("acme")
	for id, n := range map[string]int{"strict-1": 1, "patient-1": 4, "plain-1": 3} {
		run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, id, n, testkit.RunErrors(1, "error", testkit.RunErrorTexts("attempt %d failed", 1, n)...)...)
		if run.Status != docket.StatusFailed || run.LatestCheckpointType != "fail" {
			t.Fatalf("%s: %+v, want failed by a fail verdict", id, run)
		}
		want := make([]int, n)
		for i := range want {
			want[i] = i + 1
		}
		attempts.expect(t, id, want...)
	}
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "panics-1", 2, testkit.RunErrors(1, "panic", testkit.RunErrorTexts("attempt %d panicked", 1, 2)...)...)
	if run.Status != docket.StatusFailed || run.LatestCheckpointType != "panic" {
		t.Fatalf("panics-1: %+v, want failed by a panic", run)
	}
	attempts.expect(t, "panics-1", 1, 2)
}
