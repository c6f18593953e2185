package docket

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// drain finishes a stopping worker. After Stop it lets in-flight handlers
// finish until Stop's context ends (when ctx ended instead, it does not
// wait); then it cancels the remaining handlers and hands their claims back
// with the admission kept. It returns the failed hand-backs; those claims
// expire after ClaimTTL and are stolen, so no run is lost.
func (w *Worker) drain(ctx, io context.Context, cancelHandlers context.CancelCauseFunc) error {
	w.mu.Lock()
	stopCtx := w.stopCtx
	w.mu.Unlock()
	w.logger.InfoContext(io, "docket worker stopping", "in_flight", len(w.inFlight()))
	if stopCtx != nil && ctx.Err() == nil {
		w.awaitIdle(ctx, stopCtx)
	}
	// Surrender first, so a handler that returns once cancelled cannot
	// commit its verdict ahead of the hand-back.
	var surrendered []*Job
	for _, j := range w.inFlight() {
		if j.surrender() {
			surrendered = append(surrendered, j)
		}
	}
	cancelHandlers(ErrWorkerStopped)

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		yielded  int
		failures []error
	)
	for _, j := range surrendered {
		wg.Go(func() {
			released, err := j.handBack(io)
			mu.Lock()
			defer mu.Unlock()
			if released {
				yielded++
			}
			if err != nil {
				failures = append(failures, err)
				w.failure(io, "docket worker could not hand a claim back; it will expire", j.RunID, err)
			}
		})
	}
	wg.Wait()
	if yielded > 0 {
		w.announceYield(io)
	}
	w.logger.InfoContext(io, "docket worker stopped", "handed_back", yielded, "hand_back_failures", len(failures))
	if len(failures) > 0 {
		return fmt.Errorf("docket: worker stop: %d claims could not be handed back and will expire: %w",
			len(failures), errors.Join(failures...))
	}
	return nil
}

// awaitIdle waits until no job is in flight, or ctx or stopCtx ends.
func (w *Worker) awaitIdle(ctx, stopCtx context.Context) {
	for len(w.inFlight()) > 0 {
		select {
		case <-w.jobEnded:
		case <-stopCtx.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}
