package usage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/dockettest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// workWith runs WorkWith on runID of tenant and fails t on a failure.
func (e *workEnv) workWith(tenant, runID string, opts dockettest.WorkOptions) docket.Run {
	e.t.Helper()
	var run docket.Run
	passes(e.t, "WorkWith "+runID, func(tb dockettest.TB) {
		run = dockettest.WorkWith(e.ctx, tb, e.client, docket.Tenant(tenant), runID, opts)
	})
	return run
}

// due makes the released runID due now with plain SQL, instead of waiting
// for its backoff.
func (e *workEnv) due(runID string) {
	e.t.Helper()
	testkit.ExecSQL(e.t, e.pool, `update docket_runs set wake_at = now() where run_id = $1 and claim_token is null`, runID)
}

// WorkWith commits a failed attempt exactly as a Worker with the same
// RetryPolicy: released until the commit time plus the policy's backoff,
// with the injected jitter, the attempt counted and its error recorded,
// and not due before then; the attempt numbered MaxAttempts fails the run
// with the whole history.
func TestDockettestWorkWithRetryPolicy(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	acme := docket.Tenant("acme")
	e.insert("acme", "dt-rp-flaky", time.Time{})
	var seen []int
	opts := dockettest.WorkOptions{
		Retry: docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Hour, MaxBackoff: 90 * time.Minute, Multiplier: 2,
			Jitter: 0.5, Random: func() float64 { return 0.5 }},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			seen = append(seen, job.Attempt)
			if job.Attempt == 2 {
				panic("attempt 2 panicked")
			}
			return docket.Fail(fmt.Errorf("attempt %d failed", job.Attempt))
		},
	}
	wantErrors := []testkit.RunErrorEntry{{Attempt: 1, Kind: "error", Error: "attempt 1 failed"}, {Attempt: 2, Kind: "panic", Error: "attempt 2 panicked"},
		{Attempt: 3, Kind: "error", Error: "attempt 3 failed"}}
	// Jitter 0.5 drawn at 0.5 takes a quarter off: 1h becomes 45m, and 2h,
	// capped at 90m, becomes 67m30s.
	for n, backoff := range []time.Duration{45 * time.Minute, 67*time.Minute + 30*time.Second} {
		run := e.workWith("acme", "dt-rp-flaky", opts)
		stored := testkit.RunErrorExpect(t, e.pool, e.client, acme, "dt-rp-flaky", n+1, wantErrors[:n+1]...)
		if run.Status != docket.StatusRunning || run.Claimed() || run.Attempt != n+1 || run.LatestCheckpointType != "backoff" ||
			run.WakeAt == nil || run.WakeAt.Sub(run.UpdatedAt) != backoff || !run.Errors[n].At.Equal(run.UpdatedAt) ||
			!stored.WakeAt.Equal(*run.WakeAt) {
			t.Fatalf("after failed attempt %d: %+v, want running, released for %v after its commit", n+1, run, backoff)
		}
		if insp := e.inspect("acme", "dt-rp-flaky"); insp.State != docket.AdmissionInactive {
			t.Fatalf("after failed attempt %d the run keeps admission state %s", n+1, insp.State)
		}
		failsWith(t, "a run in its backoff",
			fmt.Sprintf(`dockettest: WorkWith: docket: run "dt-rp-flaky" is not due until %s (the database clock reads `,
				run.WakeAt.UTC().Format(time.RFC3339Nano)),
			func(tb dockettest.TB) { dockettest.WorkWith(e.ctx, tb, e.client, acme, "dt-rp-flaky", opts) })
		e.due("dt-rp-flaky")
	}
	run := e.workWith("acme", "dt-rp-flaky", opts)
	testkit.RunErrorExpect(t, e.pool, e.client, acme, "dt-rp-flaky", 3, wantErrors...)
	if run.Status != docket.StatusFailed || run.Attempt != 3 || run.LatestCheckpointType != "fail" || !run.Errors[2].At.Equal(run.UpdatedAt) {
		t.Fatalf("after the last attempt: %+v, want failed by a fail verdict", run)
	}
	if !slices.Equal(seen, []int{1, 2, 3}) {
		t.Fatalf("the handler saw attempts %v, want [1 2 3]", seen)
	}

	// Work is WorkWith without retries: the first failure fails the run.
	e.insert("acme", "dt-rp-once", time.Time{})
	run = e.work("acme", "dt-rp-once", opts.Handler)
	testkit.RunErrorExpect(t, e.pool, e.client, acme, "dt-rp-once", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "attempt 1 failed"})
	if run.Status != docket.StatusFailed || run.LatestCheckpointType != "fail" {
		t.Fatalf("Work without a policy: %+v, want failed", run)
	}
}

// invoice is the typed state of the registry test's graph.
type invoice struct {
	Invoice string `json:"invoice"`
	Amount  int    `json:"amount"`
	Paid    bool   `json:"paid,omitempty"`
}

// WorkWith routes the run through a Handlers registry as a Worker does: the
// graph's handler gets the decoded state under its HandlerTimeout, its
// HandlerRetry beats Retry, and a graph without a handler fails its attempt
// with ErrNoHandler under Retry.
func TestDockettestWorkWithHandlers(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 4)
	acme := docket.Tenant("acme")
	var states []invoice
	var deadlines []bool
	handlers := docket.NewHandlers()
	if err := docket.Register(handlers, "dt-invoice", func(ctx context.Context, job *docket.Job, st invoice) docket.Result {
		states = append(states, st)
		deadline, ok := ctx.Deadline()
		deadlines = append(deadlines, ok && time.Until(deadline) > 0 && time.Until(deadline) <= time.Hour)
		if job.Attempt == 1 {
			return docket.Fail(errors.New("gateway down"))
		}
		st.Paid = true
		return docket.TypedComplete(st)
	}, docket.HandlerTimeout(time.Hour), docket.HandlerRetry(docket.RetryPolicy{MaxAttempts: 2, Backoff: 2 * time.Minute})); err != nil {
		t.Fatal(err)
	}
	for _, r := range []docket.NewRun{run("dt-h-inv", "acme", "dt-invoice", `{"invoice": "inv-1", "amount": 42}`), run("dt-h-other", "beta", "dt-other", `{}`)} {
		if _, err := e.client.InsertRun(e.ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// The graph's HandlerRetry, not Retry, decides the retries.
	opts := dockettest.WorkOptions{Handlers: handlers}
	got := e.workWith("acme", "dt-h-inv", opts)
	testkit.RunErrorExpect(t, e.pool, e.client, acme, "dt-h-inv", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "gateway down"})
	if got.Status != docket.StatusRunning || got.LatestCheckpointType != "backoff" || got.WakeAt == nil || got.WakeAt.Sub(got.UpdatedAt) != 2*time.Minute {
		t.Fatalf("after the failed attempt: %+v, want released for 2m after its commit", got)
	}
	e.due("dt-h-inv")
	got = e.workWith("acme", "dt-h-inv", opts)
	if got.Status != docket.StatusDone || got.Attempt != 2 || string(got.State) != `{"paid": true, "amount": 42, "invoice": "inv-1"}` || len(got.Errors) != 1 {
		t.Fatalf("after the second attempt: %+v (state %s), want done and paid", got, got.State)
	}
	if want := []invoice{{Invoice: "inv-1", Amount: 42}, {Invoice: "inv-1", Amount: 42}}; !slices.Equal(states, want) {
		t.Fatalf("the handler decoded %+v, want %+v", states, want)
	}
	if !slices.Equal(deadlines, []bool{true, true}) {
		t.Fatalf("the handler's context had the HandlerTimeout deadline: %v", deadlines)
	}

	// A graph without a handler fails its attempt under Retry.
	opts.Retry = docket.RetryPolicy{MaxAttempts: 2, Backoff: time.Minute}
	got = e.workWith("beta", "dt-h-other", opts)
	testkit.RunErrorExpect(t, e.pool, e.client, docket.Tenant("beta"), "dt-h-other", 1,
		testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: `no handler registered for graph "dt-other"`})
	if got.Status != docket.StatusRunning || got.LatestCheckpointType != "backoff" || got.WakeAt.Sub(got.UpdatedAt) != time.Minute {
		t.Fatalf("the run without a handler: %+v, want released for 1m", got)
	}
}

// WorkWith refuses options a Worker would refuse before any SQL, and
// leaves the run as it was.
func TestDockettestWorkWithRefusals(t *testing.T) {
	t.Parallel()
	e := newDTWorkEnv(t, 2)
	e.insert("acme", "dt-wr-1", time.Time{})
	before := e.inspect("acme", "dt-wr-1")
	never := never(t)
	for _, c := range []struct {
		what string
		opts dockettest.WorkOptions
		want string
	}{
		{"no handler", dockettest.WorkOptions{}, `dockettest: WorkWith: docket: invalid argument: Work needs a client and a handler`},
		{"both handlers", dockettest.WorkOptions{Handler: never, Handlers: docket.NewHandlers()},
			`dockettest: WorkWith: docket: invalid argument: Work takes a Handler or Handlers, not both`},
		{"an invalid policy", dockettest.WorkOptions{Handler: never, Retry: docket.RetryPolicy{Jitter: 2}},
			`dockettest: WorkWith: docket: invalid config: worker Retry.Jitter 2 is outside 0..1`},
	} {
		fails(t, c.what, c.want, func(tb dockettest.TB) {
			dockettest.WorkWith(e.ctx, tb, e.client, docket.Tenant("acme"), "dt-wr-1", c.opts)
		})
	}
	after := e.inspect("acme", "dt-wr-1")
	before.ObservedAt, after.ObservedAt = time.Time{}, time.Time{}
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("a refused WorkWith changed the run:\nbefore %+v\nafter  %+v", before, after)
	}
	var policyErr *docket.RetryPolicyError
	_, err := docket.NewWorker(e.client, docket.WorkerConfig{Concurrency: 1, Handler: never, Retry: docket.RetryPolicy{Jitter: 2}})
	if !errors.As(err, &policyErr) || policyErr.Field != "Jitter" {
		t.Fatalf("the Worker's refusal of the same policy: %v", err)
	}
}
