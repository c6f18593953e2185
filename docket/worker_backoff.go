package docket

import (
	"context"
	"math/rand/v2"
	"time"
)

// workerCallTimeout bounds one database call of the worker (claim, read,
// commit, release, notify), so a hung connection cannot stall it forever.
const workerCallTimeout = 30 * time.Second

// Backoff bounds after a failed call: the wait doubles from
// errorBackoffBase up to errorBackoffMax.
const (
	errorBackoffBase = 100 * time.Millisecond
	errorBackoffMax  = 5 * time.Second
)

// errorBackoff is the wait after the given number of consecutive failures
// (>= 1): exponential with jitter in its upper half, so workers that failed
// together do not retry together.
func errorBackoff(failures int) time.Duration {
	d := errorBackoffBase << min(max(failures-1, 0), 6)
	d = min(d, errorBackoffMax)
	return d/2 + rand.N(d/2+1)
}

// contentionBackoff is the short jittered wait after a claim refused for
// lock contention: another poller holds the policy lock, which is normal.
func contentionBackoff() time.Duration {
	return 10*time.Millisecond + rand.N(50*time.Millisecond)
}

// sleep waits d or until ctx ends, and reports whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
