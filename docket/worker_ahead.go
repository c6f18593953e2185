package docket

import (
	"math"
	"sync"
	"time"
)

// aheadSmoothing is the weight of a new observation in the moving averages
// of claim call and handler times.
const aheadSmoothing = 0.2

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
	// claim and handler are the moving averages in nanoseconds, 0 before
	// the first observation.
	claim, handler float64
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
	claim, handler := a.claim, a.handler
	a.mu.Unlock()
	if claim == 0 || handler == 0 {
		return 0
	}
	want := math.Round(float64(a.concurrency) * claim / handler)
	return int(min(want, float64(a.bound)))
}

// observeClaim records how long a claim call took.
func (a *claimAhead) observeClaim(d time.Duration) { a.observe(&a.claim, d) }

// observeHandler records how long a handler call took.
func (a *claimAhead) observeHandler(d time.Duration) { a.observe(&a.handler, d) }

func (a *claimAhead) observe(avg *float64, d time.Duration) {
	if a.fixed {
		return
	}
	ns := float64(max(d, time.Microsecond))
	a.mu.Lock()
	defer a.mu.Unlock()
	if *avg == 0 {
		*avg = ns
		return
	}
	*avg += aheadSmoothing * (ns - *avg)
}
