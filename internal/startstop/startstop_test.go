package startstop

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// deadline bounds every wait, so a broken lifecycle fails instead of
// hanging; no test waits for it to pass.
const deadline = 10 * time.Second

// await fails the test unless ch is closed or receives within deadline.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(deadline):
		t.Fatalf("%s did not happen", what)
	}
}

// closed reports whether ch is closed (or has a value) right now.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// blocking is a run function that counts its runs and returns once its
// context ended.
type blocking struct{ runs atomic.Int32 }

func (b *blocking) run(ctx context.Context) {
	b.runs.Add(1)
	<-ctx.Done()
}

// A Stop before any Start returns at once, closes Stopped but not Started,
// and keeps a later Start from running anything: it returns ErrStopped.
// A second Stop returns at once too.
func TestStopBeforeStart(t *testing.T) {
	var fn blocking
	s := NewFunc(fn.run)
	s.Stop()
	s.Stop()
	if !closed(s.Stopped()) || closed(s.Started()) {
		t.Fatalf("after Stop: stopped %v, started %v; want stopped only", closed(s.Stopped()), closed(s.Started()))
	}
	if err := s.Start(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("Start after Stop = %v, want ErrStopped", err)
	}
	if closed(s.Started()) || fn.runs.Load() != 0 {
		t.Fatalf("a stopped service ran %d times", fn.runs.Load())
	}
}

// A second Start is refused with ErrAlreadyStarted, while running and after
// the run ended, and the function runs exactly once.
func TestSecondStartIsRefused(t *testing.T) {
	var fn blocking
	s := NewFunc(fn.run)
	if err := s.Start(context.Background()); err != nil {
		t.Fatalf("first Start = %v", err)
	}
	await(t, s.Started(), "the start")
	if err := s.Start(context.Background()); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second Start = %v, want ErrAlreadyStarted", err)
	}
	s.Stop()
	if err := s.Start(context.Background()); !errors.Is(err, ErrStopped) {
		t.Fatalf("Start after the run = %v, want ErrStopped", err)
	}
	if n := fn.runs.Load(); n != 1 {
		t.Fatalf("the function ran %d times, want 1", n)
	}
}

// Stop cancels the run's context and returns only after the run function
// returned, even when it returns long after its context ended; every Stop,
// concurrent ones included, waits the same way.
func TestStopWaitsForTheGoroutine(t *testing.T) {
	cancelled := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	s := NewFunc(func(ctx context.Context) {
		<-ctx.Done()
		close(cancelled)
		<-release
		finished.Store(true)
	})
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var returned [2]chan struct{}
	for i := range returned {
		returned[i] = make(chan struct{})
		go func() {
			defer close(returned[i])
			s.Stop()
		}()
	}
	await(t, cancelled, "the cancellation of the run's context")
	for i, r := range returned {
		if closed(r) {
			t.Fatalf("Stop %d returned while the run function was still running", i)
		}
	}
	if closed(s.Stopped()) {
		t.Fatal("Stopped closed while the run function was still running")
	}
	close(release)
	for _, r := range returned {
		await(t, r, "the return of Stop")
	}
	if !finished.Load() || !closed(s.Stopped()) {
		t.Fatalf("after Stop: finished %v, stopped %v", finished.Load(), closed(s.Stopped()))
	}
}

// The end of Start's context ends the run without Stop: Stopped closes,
// and a Stop afterwards returns at once.
func TestContextCancelStops(t *testing.T) {
	var fn blocking
	s := NewFunc(fn.run)
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	await(t, s.Started(), "the start")
	if closed(s.Stopped()) {
		t.Fatal("stopped before its context ended")
	}
	cancel()
	await(t, s.Stopped(), "the stop on the context's end")
	s.Stop()
	if n := fn.runs.Load(); n != 1 {
		t.Fatalf("the function ran %d times, want 1", n)
	}
}

// counter is a Service of its own that embeds Base, as the Worker's
// services do.
type counter struct {
	Base
	ticks chan struct{}
	seen  int
}

func (c *counter) Start(ctx context.Context) error { return c.StartFunc(ctx, c.run) }

func (c *counter) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.ticks:
			c.seen++
		}
	}
}

// A service embedding Base satisfies Service with Start alone, and its
// state written by the run is visible once Stop returned.
func TestEmbeddedBase(t *testing.T) {
	c := &counter{ticks: make(chan struct{})}
	var s Service = c
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.ticks <- struct{}{}
	}
	s.Stop()
	if c.seen != 3 {
		t.Fatalf("the run saw %d ticks, want 3", c.seen)
	}
}
