package dockettest

import (
	"context"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/testseam"
)

// Work runs handler on the run runID of scope synchronously, in the calling
// goroutine, exactly as a Worker would and through the same code: it claims
// the run with the client's engine (the Worker's claim call, which reads the
// run in the same batch), calls handler with a real *docket.Job, commits its
// verdict with the Worker's fenced commit, and returns the run as committed.
//
// Only that run is claimed: while the claim calls run, a transaction of
// Work's own locks every other running run, which the engine then skips.
// So the engine decides as it would for a Worker, and Work fails t with the
// reason when it would not lease the run now: waiting for an external
// event, finished, poisoned, claimed by another holder, not yet due, queued
// behind its tenant's cap, or behind an older queued run of its tenant
// (Work that one first). Those checks and the claim have the same side
// effects as a Worker's claim calls (the TenantFair cursor moves); the run
// itself is changed only by the lease and the verdict.
//
// The handler's context is ctx with the job's cancellation; a handler that
// panics fails the run, as under a Worker. A verdict that was not written
// (say, the claim was lost) fails t.
//
// Work runs handler as a Worker with the zero RetryPolicy does, so a failed
// attempt fails the run; WorkWith takes a RetryPolicy, or a Handlers
// registry instead of the handler.
func Work(ctx context.Context, t TB, client *docket.Client, scope docket.Scope, runID string, handler docket.Handler) docket.Run {
	t.Helper()
	return work(ctx, t, "Work", client, scope, runID, docket.WorkerConfig{Handler: handler})
}

// WorkOptions is how WorkWith handles the run: what a WorkerConfig says of
// it, for the one Worker WorkWith acts as.
type WorkOptions struct {
	// Handler runs the run. Set it or Handlers, not both.
	Handler docket.Handler
	// Handlers routes the run to the handler registered for its graph id,
	// with that graph's HandlerTimeout and HandlerRetry, as
	// WorkerConfig.Handlers does. Set it or Handler, not both.
	Handlers *docket.Handlers
	// Retry is the Worker's WorkerConfig.Retry: a failed attempt (Fail, a
	// panic, the zero Result) with attempts left is committed as that
	// Worker commits it, a "backoff" release after the policy's delay. The
	// zero policy fails the run at once, as Work does. An invalid policy
	// fails t with the *docket.RetryPolicyError.
	Retry docket.RetryPolicy
}

// WorkWith is Work with the handler and retry policy of opts: it works the
// run runID of scope exactly as a Worker whose WorkerConfig has opts'
// Handler or Handlers and Retry would, and returns the run as committed.
// So an application tests its retry behaviour one attempt at a time: each
// call works one attempt, and a run released with a backoff is not due
// until its wake time (WorkWith fails t saying so before that).
func WorkWith(ctx context.Context, t TB, client *docket.Client, scope docket.Scope, runID string, opts WorkOptions) docket.Run {
	t.Helper()
	return work(ctx, t, "WorkWith", client, scope, runID,
		docket.WorkerConfig{Handler: opts.Handler, Handlers: opts.Handlers, Retry: opts.Retry})
}

// work runs the run through package docket's seam and fails t, naming the
// helper, on an error.
func work(ctx context.Context, t TB, helper string, client *docket.Client, scope docket.Scope, runID string, cfg docket.WorkerConfig) docket.Run {
	t.Helper()
	work := testseam.Work.(func(context.Context, *docket.Client, docket.Scope, string, docket.WorkerConfig) (docket.Run, error))
	run, err := work(ctx, client, scope, runID, cfg)
	if err != nil {
		t.Fatalf("dockettest: %s: %v", helper, err)
		return docket.Run{}
	}
	return run
}
