package docket

import (
	"context"
	"fmt"
	"sync"
)

// runOne runs the job of lease, which a claim call read into read, in the
// calling goroutine exactly as a Worker of one slot runs a job: the run is
// read from the claim's batch, the handler runs with a heartbeat and its
// context is cancelled if the claim is lost, and its verdict goes through
// the Worker's group commit, fenced on the claim. It returns the run as
// committed, or an error when the handler never ran or its verdict was not
// written.
func (c *Client) runOne(ctx context.Context, lease Lease, read *leaseRead, handler Handler) (Run, error) {
	var mu sync.Mutex
	var started bool
	var last *WorkerEvent
	w, err := NewWorker(c, WorkerConfig{Concurrency: 1, Handler: handler, OnEvent: func(e WorkerEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch e.Kind {
		case EventHandlerStarted:
			started = true
		case EventVerdict:
			last = &e
		}
	}})
	if err != nil {
		return Run{}, err
	}
	j, handlerCtx := newJob(w, lease, read, ctx)
	w.mu.Lock()
	w.jobs[j] = struct{}{}
	w.mu.Unlock()
	func() {
		defer w.finished(j)
		defer w.commits.Settle(j.member)
		j.run(handlerCtx, context.WithoutCancel(ctx))
	}()
	mu.Lock()
	defer mu.Unlock()
	switch {
	case !started:
		return Run{}, fmt.Errorf("docket: Work: the claimed run %q could not be read; its claim was released", lease.RunID)
	case last == nil:
		return Run{}, fmt.Errorf("docket: Work: no verdict of run %q was written", lease.RunID)
	case last.Outcome != VerdictWritten:
		return Run{}, fmt.Errorf("docket: Work: the %s verdict of run %q was %s: %w", last.Verdict, lease.RunID, last.Outcome, last.Err)
	}
	return c.FetchRun(context.WithoutCancel(ctx), lease.Scope, lease.RunID)
}
