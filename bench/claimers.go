package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"

	"github.com/docketrun/docket-go/docket"
)

// claimClaimTTL keeps every claim of the direct loops unexpired, so no
// loop steals another's claims.
const claimClaimTTL = time.Hour

// claimFunc is one claim call of an engine: the number of claims it made,
// or an error.
type claimFunc func(ctx context.Context) (int, error)

// docketClaim is ClaimDue of demand on client: due work only, no poisoning.
func docketClaim(client *docket.Client, demand int) claimFunc {
	return func(ctx context.Context) (int, error) {
		res, err := client.ClaimDue(ctx, docketRequest(demand))
		return res.Outcomes(), err
	}
}

// docketRequest is a claim request of demand at the current time.
func docketRequest(demand int) docket.ClaimRequest {
	return docket.ClaimRequest{Now: time.Now(), Limit: demand, ClaimTTL: claimClaimTTL, MaxClaimAttempts: 1000}
}

// riverClaim is River's fetch path as its producer runs it: the pgx v5
// driver executor's JobGetAvailable on the default queue, locking up to
// demand available jobs and moving them to running.
func riverClaim(exec riverdriver.Executor, claimer, demand int) claimFunc {
	id := fmt.Sprintf("bench-claimer-%d", claimer)
	return func(ctx context.Context) (int, error) {
		now := time.Now()
		res, err := exec.JobGetAvailable(ctx, &riverdriver.JobGetAvailableParams{
			ClientID: id, MaxAttemptedBy: 100, MaxToLock: demand, Now: &now, Queue: river.QueueDefault,
		})
		if err != nil {
			return 0, err
		}
		return len(res.Jobs), nil
	}
}

// isLockContention reports a claim refused for policy lock contention.
func isLockContention(err error) bool {
	unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err)
	return ok && unavailable.Reason == "lock_contention"
}

// loopResult is what concurrent claim loops measured.
type loopResult struct {
	// Claims counts the claims of timed calls.
	Claims int
	// Calls are the durations of timed calls, lock-contention refusals
	// included.
	Calls []time.Duration
	// Contention counts calls refused for lock contention, Empty calls that
	// claimed nothing.
	Contention int
	Empty      int
	// Elapsed runs from the start signal until the last loop ended.
	Elapsed time.Duration
	// Exhausted reports whether the backlog was claimed to the end before
	// the budget ran out.
	Exhausted bool
	// CPU is the CPU time spent during the timed part.
	CPU cpuUse
}

// claimsPerSecond is the claim rate of the timed calls.
func (r loopResult) claimsPerSecond() float64 { return ratio(float64(r.Claims), r.Elapsed.Seconds()) }

// runClaimLoops runs loops concurrent claim loops (loop i calling
// claims[i]) that keep their claims until backlog runs have been claimed or
// budget has passed. Every loop makes one untimed warm-up call first, so
// connections and plans are ready when the timed part starts together;
// cpu is sampled around the timed part.
func runClaimLoops(ctx context.Context, cpu cpuMeter, claims []claimFunc, backlog int, budget time.Duration) (loopResult, error) {
	var total atomic.Int64
	warmups := make([]error, len(claims))
	var warm sync.WaitGroup
	for i, claim := range claims {
		warm.Go(func() {
			n, err := claim(ctx)
			if isLockContention(err) {
				err = nil
			}
			total.Add(int64(n))
			warmups[i] = err
		})
	}
	warm.Wait()
	if err := errors.Join(warmups...); err != nil {
		return loopResult{}, fmt.Errorf("warm-up call: %w", err)
	}

	results := make([]loopResult, len(claims))
	errs := make([]error, len(claims))
	before := cpu.sample()
	began := time.Now()
	deadline := began.Add(budget)
	var loops sync.WaitGroup
	for i, claim := range claims {
		loops.Go(func() {
			results[i], errs[i] = claimLoop(ctx, claim, &total, int64(backlog), deadline)
		})
	}
	loops.Wait()
	out := loopResult{Elapsed: time.Since(began), Exhausted: total.Load() >= int64(backlog), CPU: cpu.sample().since(before)}
	for _, r := range results {
		out.Claims += r.Claims
		out.Calls = append(out.Calls, r.Calls...)
		out.Contention += r.Contention
		out.Empty += r.Empty
	}
	return out, errors.Join(errs...)
}

// claimLoop calls claim until total reaches backlog or the deadline passes.
func claimLoop(ctx context.Context, claim claimFunc, total *atomic.Int64, backlog int64, deadline time.Time) (loopResult, error) {
	var r loopResult
	for total.Load() < backlog && time.Now().Before(deadline) {
		start := time.Now()
		n, err := claim(ctx)
		r.Calls = append(r.Calls, time.Since(start))
		switch {
		case isLockContention(err):
			r.Contention++
			continue
		case err != nil:
			return r, err
		case n == 0:
			r.Empty++
		}
		r.Claims += n
		total.Add(int64(n))
	}
	return r, nil
}
