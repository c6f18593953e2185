package tests

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errNoProgress reports a claimer that found nothing and then saw no other
// claimer commit within wkDeadline.
var errNoProgress = errors.New("no claimer committed within the deadline")

// claimProgress lets concurrent claimers of one test wait for each other: a
// claimer whose call leased nothing waits until another one commits, the
// only thing that can free work for it, instead of asking again on a timer.
type claimProgress struct {
	mu sync.Mutex
	// committed is closed, and replaced, on each commit.
	committed chan struct{}
}

func newClaimProgress() *claimProgress { return &claimProgress{committed: make(chan struct{})} }

// mark records a commit.
func (p *claimProgress) mark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.committed)
	p.committed = make(chan struct{})
}

// next returns the channel closed by the next commit. A claimer takes it
// before its claim call, so a commit made during the call is not missed.
func (p *claimProgress) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed
}

// wait blocks until committed is closed or ctx ends, and fails with
// errNoProgress after wkDeadline, which only bounds a hang.
func (p *claimProgress) wait(ctx context.Context, committed <-chan struct{}) error {
	timeout := time.NewTimer(wkDeadline)
	defer timeout.Stop()
	select {
	case <-committed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout.C:
		return errNoProgress
	}
}
