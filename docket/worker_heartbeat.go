package docket

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketrun/docket-go/internal/heartbeat"
)

// newHeartbeat returns the heartbeat of j's claim, not yet started: it
// refreshes the claim every HeartbeatInterval (see package heartbeat). A
// claim the store reports gone cancels the handler and blocks further
// writes; a claim that could not be refreshed for ClaimTTL is presumed lost
// and cancels the handler, but the verdict is still offered to the fence.
func (j *Job) newHeartbeat() *heartbeat.Heartbeat {
	w := j.worker
	return heartbeat.New(heartbeat.Config{
		Interval: w.cfg.HeartbeatInterval,
		TTL:      w.cfg.ClaimTTL,
		Refresh: func(ctx context.Context) error {
			_, err := w.client.RefreshClaim(ctx, j.holder)
			return err
		},
		Lost: func(err error) bool { return errors.Is(err, ErrClaimLost) || errors.Is(err, ErrNotFound) },
		Held: &j.held,
		OnLost: func(ctx context.Context, err error) {
			w.logger.InfoContext(ctx, "docket worker lost a claim; cancelling its handler")
			w.debug(ctx, "docket worker claim lost", j.RunID)
			j.mu.Lock()
			j.released = true
			j.mu.Unlock()
			if errors.Is(err, ErrRunCancelled) {
				j.cancelHandler(revocationCause(StatusCancelled))
				return
			}
			j.cancelHandler(fmt.Errorf("%w: the store no longer shows the claim", ErrClaimLost))
		},
		OnFailed: func(ctx context.Context, err error) { w.failure(ctx, "docket worker heartbeat failed", j.RunID, err) },
		OnExpired: func(ctx context.Context) {
			w.logger.WarnContext(ctx, "docket worker presumes a claim lost after a ClaimTTL without refresh; cancelling its handler")
			j.cancelHandler(fmt.Errorf("%w: not refreshed within the claim TTL", ErrClaimLost))
		},
	})
}
