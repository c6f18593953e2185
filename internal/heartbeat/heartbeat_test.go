package heartbeat

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manual clock: time moves only by advance, and the test
// fires the armed timer itself, in its own goroutine.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	timer *fakeTimer
	// armed receives the delay of every AfterFunc and Reset.
	armed chan time.Duration
}

type fakeTimer struct {
	c      *fakeClock
	f      func()
	active bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), armed: make(chan time.Duration, 8)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer = &fakeTimer{c: c, f: f, active: true}
	c.armed <- d
	return c.timer
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = true
	t.c.armed <- d
	return was
}

// fire runs the armed timer's function, as its expiry would, and reports
// whether the timer was armed.
func (c *fakeClock) fire() bool {
	c.mu.Lock()
	t := c.timer
	armed := t != nil && t.active
	if armed {
		t.active = false
	}
	c.mu.Unlock()
	if armed {
		t.f()
	}
	return armed
}

// expectArmed fails unless the timer was armed with want, and nothing else.
func (c *fakeClock) expectArmed(t *testing.T, want time.Duration) {
	t.Helper()
	select {
	case got := <-c.armed:
		if got != want {
			t.Fatalf("armed for %v, want %v", got, want)
		}
	default:
		t.Fatalf("not armed, want %v", want)
	}
	if len(c.armed) != 0 {
		t.Fatalf("armed again for %v", <-c.armed)
	}
}

// expectIdle fails if the timer was armed.
func (c *fakeClock) expectIdle(t *testing.T) {
	t.Helper()
	if len(c.armed) != 0 {
		t.Fatalf("armed for %v, want no further refresh", <-c.armed)
	}
}

var errGone = errors.New("claim gone")

// heldAt is a Held.
type heldAt struct{ at atomic.Int64 }

func (h *heldAt) Confirm(t time.Time) { h.at.Store(t.UnixNano()) }
func (h *heldAt) At() time.Time       { return time.Unix(0, h.at.Load()) }

// rig is a heartbeat over a fake clock whose refresh answers from script;
// start starts it on a context that stop ends.
type rig struct {
	clock     *fakeClock
	held      *heldAt
	cfg       Config
	stop      context.CancelFunc
	refresh   func(ctx context.Context) error
	refreshed int
	lost      []error
	failed    []error
	expired   int
}

const (
	interval = 10 * time.Second
	ttl      = 30 * time.Second
)

func newRig() *rig {
	r := &rig{clock: newFakeClock(), held: &heldAt{}}
	r.held.Confirm(r.clock.Now())
	r.refresh = func(context.Context) error { return nil }
	r.cfg = Config{
		Interval: interval,
		TTL:      ttl,
		Refresh: func(ctx context.Context) error {
			r.refreshed++
			return r.refresh(ctx)
		},
		Lost:      func(err error) bool { return errors.Is(err, errGone) },
		Held:      r.held,
		Clock:     r.clock,
		OnLost:    func(_ context.Context, err error) { r.lost = append(r.lost, err) },
		OnFailed:  func(_ context.Context, err error) { r.failed = append(r.failed, err) },
		OnExpired: func(context.Context) { r.expired++ },
	}
	return r
}

// start starts the heartbeat on a child of ctx.
func (r *rig) start(ctx context.Context) {
	ctx, r.stop = context.WithCancel(ctx)
	Start(ctx, r.cfg)
}

// Each refresh is armed an interval after the previous one began: the
// time a refresh took comes off the next wait, all of it when it took
// longer than the interval. Each success confirms the claim.
func TestRefreshSchedule(t *testing.T) {
	r := newRig()
	r.start(t.Context())
	r.clock.expectArmed(t, interval)

	r.clock.advance(interval)
	r.clock.fire()
	if r.refreshed != 1 || !r.held.At().Equal(r.clock.Now()) {
		t.Fatalf("refreshes %d, held at %v, want 1 at %v", r.refreshed, r.held.At(), r.clock.Now())
	}
	r.clock.expectArmed(t, interval)

	r.refresh = func(context.Context) error { r.clock.advance(3 * time.Second); return nil }
	r.clock.advance(interval)
	r.clock.fire()
	r.clock.expectArmed(t, 7*time.Second)

	r.refresh = func(context.Context) error { r.clock.advance(12 * time.Second); return nil }
	r.clock.advance(7 * time.Second)
	r.clock.fire()
	r.clock.expectArmed(t, 0)
	if r.refreshed != 3 || len(r.failed)+len(r.lost)+r.expired != 0 {
		t.Fatalf("refreshes %d, failed %v, lost %v, expired %d", r.refreshed, r.failed, r.lost, r.expired)
	}
}

// Each refresh is bounded by the interval.
func TestRefreshIsBoundedByTheInterval(t *testing.T) {
	r := newRig()
	var deadline time.Time
	var bounded bool
	r.refresh = func(ctx context.Context) error { deadline, bounded = ctx.Deadline(); return nil }
	before := time.Now()
	r.start(t.Context())
	r.clock.fire()
	if !bounded || deadline.Before(before) || deadline.After(time.Now().Add(interval)) {
		t.Fatalf("refresh deadline %v (set %v), want within %v of the call", deadline, bounded, interval)
	}
}

// A failed refresh is reported and the heartbeat goes on while the claim
// was confirmed within the TTL; once it was not, the claim is presumed
// lost and the heartbeat ends.
func TestFailedRefreshesUntilTheTTLPassed(t *testing.T) {
	r := newRig()
	confirmed := r.held.At()
	timeout := errors.New("timeout")
	r.refresh = func(context.Context) error { return timeout }
	r.start(t.Context())
	r.clock.expectArmed(t, interval)
	for range 2 {
		r.clock.advance(interval)
		r.clock.fire()
		r.clock.expectArmed(t, interval)
	}
	if len(r.failed) != 2 || r.expired != 0 || !r.held.At().Equal(confirmed) {
		t.Fatalf("failed %v, expired %d, held at %v", r.failed, r.expired, r.held.At())
	}
	r.clock.advance(interval)
	r.clock.fire()
	r.clock.expectIdle(t)
	if len(r.failed) != 3 || !errors.Is(r.failed[2], timeout) || r.expired != 1 || len(r.lost) != 0 {
		t.Fatalf("failed %v, expired %d, lost %v", r.failed, r.expired, r.lost)
	}
}

// A refresh that finds the claim gone ends the heartbeat at once.
func TestLostClaimEndsTheHeartbeat(t *testing.T) {
	r := newRig()
	r.refresh = func(context.Context) error { return errGone }
	r.start(t.Context())
	r.clock.expectArmed(t, interval)
	r.clock.fire()
	r.clock.expectIdle(t)
	if len(r.lost) != 1 || !errors.Is(r.lost[0], errGone) || len(r.failed) != 0 || r.expired != 0 {
		t.Fatalf("lost %v, failed %v, expired %d", r.lost, r.failed, r.expired)
	}
}

// A timer that fires after the context ended refreshes nothing and arms
// nothing.
func TestEndedContextRefreshesNothing(t *testing.T) {
	r := newRig()
	r.start(t.Context())
	r.clock.expectArmed(t, interval)
	r.stop()
	if !r.clock.fire() {
		t.Fatal("the timer was not armed")
	}
	if r.refreshed != 0 {
		t.Fatalf("refreshed %d times after the context ended", r.refreshed)
	}
	r.clock.expectIdle(t)
}

// Ending the context cancels a refresh in flight, which then reports
// nothing and arms nothing.
func TestEndedContextCancelsTheRefreshInFlight(t *testing.T) {
	r := newRig()
	inFlight := make(chan struct{})
	r.refresh = func(ctx context.Context) error {
		close(inFlight)
		<-ctx.Done()
		return ctx.Err()
	}
	r.start(t.Context())
	r.clock.expectArmed(t, interval)
	fired := make(chan struct{})
	go func() {
		defer close(fired)
		r.clock.fire()
	}()
	<-inFlight
	r.stop()
	<-fired
	r.clock.expectIdle(t)
	if len(r.failed)+len(r.lost)+r.expired != 0 {
		t.Fatalf("failed %v, lost %v, expired %d", r.failed, r.lost, r.expired)
	}
}

// A heartbeat started on an ended context never starts.
func TestStartOnAnEndedContext(t *testing.T) {
	r := newRig()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r.start(ctx)
	r.clock.expectIdle(t)
}
