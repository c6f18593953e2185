package testkit

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrNoProgress reports a claimer that found nothing and then saw no other
// claimer commit within WorkerDeadline.
var ErrNoProgress = errors.New("no claimer committed within the deadline")

// ClaimProgress lets concurrent claimers of one test wait for each other: a
// claimer whose call leased nothing waits until another one commits, the
// only thing that can free work for it, instead of asking again on a timer.
type ClaimProgress struct {
	mu sync.Mutex
	// committed is closed, and replaced, on each commit.
	committed chan struct{}
}

// NewClaimProgress returns a ClaimProgress with nothing marked yet.
func NewClaimProgress() *ClaimProgress { return &ClaimProgress{committed: make(chan struct{})} }

// mark records a commit.
func (p *ClaimProgress) Mark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.committed)
	p.committed = make(chan struct{})
}

// next returns the channel closed by the next commit. A claimer takes it
// before its claim call, so a commit made during the call is not missed.
func (p *ClaimProgress) Next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed
}

// wait blocks until committed is closed or ctx ends, and fails with
// ErrNoProgress after WorkerDeadline, which only bounds a hang.
func (p *ClaimProgress) Wait(ctx context.Context, committed <-chan struct{}) error {
	timeout := time.NewTimer(WorkerDeadline)
	defer timeout.Stop()
	select {
	case <-committed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timeout.C:
		return ErrNoProgress
	}
}
