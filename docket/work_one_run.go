package docket

import (
	"context"
	"fmt"
	"sync"
)

// workEvents is what workOne's Worker reported of its one job.
type workEvents struct {
	mu      sync.Mutex
	started bool
	last    *WorkerEvent
}

// hear is the Worker's OnEvent.
func (h *workEvents) hear(e WorkerEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch e.Kind {
	case EventHandlerStarted:
		h.started = true
	case EventVerdict:
		h.last = &e
	}
}

// runOne runs the job of lease, which a claim call read into read, in the
// calling goroutine exactly as w, a Worker of one slot that reports its
// events to heard, runs a job: the run is read from the claim's batch, the
// handler runs with a heartbeat and its context is cancelled if the claim
// is lost, and its verdict goes through the Worker's group commit, fenced
// on the claim. It returns the run as committed, or an error when the
// handler never ran or its verdict was not written.
func (w *Worker) runOne(ctx context.Context, lease Lease, read *leaseRead, heard *workEvents) (Run, error) {
	j, handlerCtx := newJob(w, lease, read, ctx)
	w.mu.Lock()
	w.jobs[j] = struct{}{}
	w.mu.Unlock()
	func() {
		defer w.finished(j)
		defer w.commits.Settle(j.member)
		j.run(handlerCtx, context.WithoutCancel(ctx))
	}()
	heard.mu.Lock()
	defer heard.mu.Unlock()
	switch last := heard.last; {
	case !heard.started:
		return Run{}, fmt.Errorf("docket: Work: the claimed run %q could not be read; its claim was released", lease.RunID)
	case last == nil:
		return Run{}, fmt.Errorf("docket: Work: no verdict of run %q was written", lease.RunID)
	case last.Outcome != VerdictWritten:
		return Run{}, fmt.Errorf("docket: Work: the %s verdict of run %q was %s: %w", last.Verdict, lease.RunID, last.Outcome, last.Err)
	}
	return w.client.FetchRun(context.WithoutCancel(ctx), lease.Scope, lease.RunID)
}
