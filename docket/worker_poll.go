package docket

import (
	"context"
	"errors"
	"time"

	"github.com/docketrun/docket-go/policy"
)

// poll is the claim loop: whenever slots are free and no backoff is
// pending, claim exactly the free slots; then wait for a freed slot, a
// notification, the backoff's end or the poll interval. It returns when ctx
// ends or Stop is called.
func (w *Worker) poll(ctx, io, handlers context.Context, wake <-chan struct{}) {
	free := w.cfg.Concurrency
	var retryAt time.Time
	failures := 0
	timer := time.NewTimer(w.cfg.PollInterval)
	defer timer.Stop()
	for {
		if ctx.Err() != nil || w.stopIsRequested() {
			return
		}
		if free > 0 && !time.Now().Before(retryAt) {
			leased, again, err := w.claim(io, handlers, free)
			free -= leased
			switch {
			case err == nil:
				failures = 0
				if again {
					continue
				}
			case isLockContention(err):
				backoff := contentionBackoff()
				retryAt = time.Now().Add(backoff)
				w.logger.DebugContext(ctx, "docket worker claim met lock contention", "retry_in", backoff)
			default:
				failures++
				backoff := errorBackoff(failures)
				retryAt = time.Now().Add(backoff)
				w.logger.WarnContext(ctx, "docket worker claim failed", "error", err.Error(), "retry_in", backoff)
			}
		}
		wait := w.cfg.PollInterval
		if until := time.Until(retryAt); until > 0 {
			wait = until
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-w.stopRequested:
			return
		case <-w.slotFreed:
			free += 1 + w.takeFreedSlots()
		case <-wake:
		case <-timer.C:
		}
	}
}

// claim asks ClaimDue for free outcomes and starts a job per lease. It
// returns the number of leases and whether to claim again at once: poisons
// count against the demand without taking a slot, so a call they filled may
// have left due work behind.
func (w *Worker) claim(io, handlers context.Context, free int) (leased int, again bool, err error) {
	preference := PreferNone
	if free == 1 {
		preference = PreferReady
		if w.preferExpired {
			preference = PreferExpired
		}
		w.preferExpired = !w.preferExpired
	}
	ctx, cancel := context.WithTimeout(io, workerCallTimeout)
	res, err := w.client.ClaimDue(ctx, ClaimRequest{
		Now:              time.Now(),
		Limit:            free,
		OrphanTTL:        w.cfg.ClaimTTL,
		MaxClaimAttempts: w.cfg.MaxClaimAttempts,
		Preference:       preference,
	})
	cancel()
	if err != nil {
		return 0, false, err
	}
	if len(res.Poisoned) > 0 {
		w.logger.InfoContext(io, "docket worker claim poisoned runs over MaxClaimAttempts", "count", len(res.Poisoned))
		for _, p := range res.Poisoned {
			w.debug(io, "docket worker poisoned run", p.RunID, "attempts", p.Attempts)
		}
	}
	for _, lease := range res.Leases {
		w.start(handlers, io, lease)
	}
	return len(res.Leases), len(res.Poisoned) > 0 && res.Outcomes() == free, nil
}

// takeFreedSlots counts the freed slots already signalled without waiting.
func (w *Worker) takeFreedSlots() int {
	n := 0
	for {
		select {
		case <-w.slotFreed:
			n++
		default:
			return n
		}
	}
}

// stopIsRequested reports whether Stop was called.
func (w *Worker) stopIsRequested() bool {
	select {
	case <-w.stopRequested:
		return true
	default:
		return false
	}
}

// isLockContention reports a claim the engine refused because its policy
// lock was busy: ordinary contention between pollers, not a failure.
func isLockContention(err error) bool {
	unavailable, ok := errors.AsType[*ClaimPolicyUnavailableError](err)
	return ok && unavailable.Reason == policy.ReasonLockContention
}
