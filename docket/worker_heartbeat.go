package docket

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// heartbeat refreshes one job's claim every HeartbeatInterval. Between beats
// no goroutine waits for it: a timer runs each beat, which arms the timer
// for the next one unless the heartbeat stopped or gave up.
type heartbeat struct {
	job *Job
	ctx context.Context

	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

// startHeartbeat starts refreshing j's claim and returns the function that
// stops it; stopping also cancels a refresh in flight.
func (j *Job) startHeartbeat(io context.Context) context.CancelFunc {
	ctx, cancel := context.WithCancel(io)
	h := &heartbeat{job: j, ctx: ctx}
	h.mu.Lock()
	h.timer = time.AfterFunc(j.worker.cfg.HeartbeatInterval, h.fire)
	h.mu.Unlock()
	return func() {
		cancel()
		h.mu.Lock()
		h.stopped = true
		h.timer.Stop()
		h.mu.Unlock()
	}
}

// fire runs one beat and arms the next one HeartbeatInterval after this
// one began, at once when the beat took longer.
func (h *heartbeat) fire() {
	began := time.Now()
	if !h.job.beat(h.ctx) {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.timer.Reset(max(h.job.worker.cfg.HeartbeatInterval-time.Since(began), 0))
	}
}

// beat refreshes the claim once and reports whether the heartbeat goes on.
// A claim the store reports gone cancels the handler and blocks further
// writes; a claim that could not be refreshed for ClaimTTL is presumed lost
// and cancels the handler, but the verdict is still offered to the fence.
func (j *Job) beat(ctx context.Context) bool {
	if ctx.Err() != nil {
		return false
	}
	cfg := j.worker.cfg
	callCtx, cancel := context.WithTimeout(ctx, cfg.HeartbeatInterval)
	_, err := j.worker.client.RefreshClaim(callCtx, j.holder)
	cancel()
	switch {
	case err == nil:
		j.confirm(time.Now())
		return true
	case ctx.Err() != nil:
		return false
	case errors.Is(err, ErrClaimLost), errors.Is(err, ErrNotFound):
		j.worker.logger.InfoContext(ctx, "docket worker lost a claim; cancelling its handler")
		j.worker.debug(ctx, "docket worker claim lost", j.RunID)
		j.mu.Lock()
		j.released = true
		j.mu.Unlock()
		j.cancelHandler(fmt.Errorf("%w: the store no longer shows the claim", ErrClaimLost))
		return false
	}
	j.worker.failure(ctx, "docket worker heartbeat failed", j.RunID, err)
	if time.Since(j.confirmed()) >= cfg.ClaimTTL {
		j.worker.logger.WarnContext(ctx, "docket worker presumes a claim lost after a ClaimTTL without refresh; cancelling its handler")
		j.cancelHandler(fmt.Errorf("%w: not refreshed within the claim TTL", ErrClaimLost))
		return false
	}
	return true
}
