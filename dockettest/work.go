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
func Work(ctx context.Context, t TB, client *docket.Client, scope docket.Scope, runID string, handler docket.Handler) docket.Run {
	t.Helper()
	work := testseam.Work.(func(context.Context, *docket.Client, docket.Scope, string, docket.Handler) (docket.Run, error))
	run, err := work(ctx, client, scope, runID, handler)
	if err != nil {
		t.Fatalf("dockettest: Work: %v", err)
		return docket.Run{}
	}
	return run
}
