package docket

import (
	"math"
	"sync"
	"time"

	"github.com/docketrun/docket-go/internal/movingavg"
)

// claimAhead decides how many runs the Worker holds beyond its handlers
// (WorkerTuning.ClaimAhead): a fixed number, or, by default, about as many
// as its handlers finish while one claim call takes, from moving averages
// of both times. Until both were observed it holds none.
type claimAhead struct {
	concurrency int
	// bound is the most it holds (WorkerConfig.aheadBound); fixed says it
	// always holds exactly bound.
	bound int
	fixed bool

	mu sync.Mutex
	// claim and handler average the claim calls' and the handlers' times.
	claim, handler movingavg.Duration
}

// newClaimAhead returns the claim-ahead of a resolved cfg.
func newClaimAhead(cfg WorkerConfig) *claimAhead {
	return &claimAhead{concurrency: cfg.Concurrency, bound: cfg.aheadBound(), fixed: cfg.Tuning.ClaimAhead != 0}
}

// target is how many runs to hold ahead now.
func (a *claimAhead) target() int {
	if a.fixed {
		return a.bound
	}
	a.mu.Lock()
	claim, handler := a.claim.Value(), a.handler.Value()
	a.mu.Unlock()
	if claim == 0 || handler == 0 {
		return 0
	}
	want := math.Round(float64(a.concurrency) * float64(claim) / float64(handler))
	return int(min(want, float64(a.bound)))
}

// observeClaim records how long a claim call took.
func (a *claimAhead) observeClaim(d time.Duration) { a.observe(&a.claim, d) }

// observeHandler records how long a handler call took.
func (a *claimAhead) observeHandler(d time.Duration) { a.observe(&a.handler, d) }

func (a *claimAhead) observe(avg *movingavg.Duration, d time.Duration) {
	if a.fixed {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	avg.Observe(d)
}
