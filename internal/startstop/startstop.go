// Package startstop gives the Worker's background services one lifecycle: a
// service runs one goroutine, started once by Start and ended by Stop or by
// the end of the context Start was given. Base owns that goroutine, its
// cancellation and the two signals tests wait on, so a service only writes
// the function the goroutine runs.
//
// A service runs at most once. A second Start is refused with
// ErrAlreadyStarted and changes nothing; a Start after Stop is refused with
// ErrStopped and runs nothing. Stop may be called any number of times, from
// any goroutine, before or after Start: the first one cancels the run, and
// every one returns only once the goroutine, if it ever started, returned.
package startstop

import (
	"context"
	"errors"
	"sync"
)

// Errors of Start.
var (
	// ErrAlreadyStarted refuses a second Start: a service runs once.
	ErrAlreadyStarted = errors.New("startstop: service already started")
	// ErrStopped refuses a Start after Stop.
	ErrStopped = errors.New("startstop: service stopped before it started")
)

// Service is a background service with a single run.
type Service interface {
	// Start runs the service on a goroutine of its own until ctx ends or
	// Stop is called. It returns at once: ErrAlreadyStarted on a service
	// started before, ErrStopped on one stopped before, nil otherwise.
	Start(ctx context.Context) error
	// Stop ends the run and waits for its goroutine to return; on a
	// service never started it only keeps Start from running it.
	Stop()
}

// Base implements the lifecycle of a Service for a run function given to
// StartFunc; a service embeds it and defines Start as a call of StartFunc.
// Its zero value is ready, its methods are safe for concurrent use, and it
// must not be copied once used.
type Base struct {
	mu sync.Mutex
	// begun is set by the first accepted StartFunc, halted by the first
	// Stop.
	begun, halted bool
	// cancel ends the run's context; nil until StartFunc.
	cancel context.CancelFunc
	// started and stopped are made on first use.
	started, stopped chan struct{}
}

// signals makes the two signal channels if they are not made yet; b.mu is
// held.
func (b *Base) signals() {
	if b.started == nil {
		b.started, b.stopped = make(chan struct{}), make(chan struct{})
	}
}

// StartFunc starts run on a goroutine of its own with a context that ends
// when ctx ends or Stop is called; run must return once that context ended.
// It refuses as Service.Start says.
func (b *Base) StartFunc(ctx context.Context, run func(ctx context.Context)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.signals()
	switch {
	case b.halted:
		return ErrStopped
	case b.begun:
		return ErrAlreadyStarted
	}
	b.begun = true
	runCtx, cancel := context.WithCancel(ctx)
	b.cancel = cancel
	go func() {
		defer close(b.stopped)
		defer cancel()
		close(b.started)
		run(runCtx)
	}()
	return nil
}

// Stop cancels the run and waits until its goroutine returned. Before any
// Start it marks the service stopped (Stopped is then closed and Started
// never is), so a later Start runs nothing.
func (b *Base) Stop() {
	b.mu.Lock()
	b.signals()
	first := !b.halted
	b.halted = true
	if !b.begun {
		if first {
			close(b.stopped)
		}
		b.mu.Unlock()
		return
	}
	cancel, stopped := b.cancel, b.stopped
	b.mu.Unlock()
	cancel()
	<-stopped
}

// Started returns a channel closed once the run's goroutine began.
func (b *Base) Started() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.signals()
	return b.started
}

// Stopped returns a channel closed once the run's goroutine returned, or
// by a Stop before any Start.
func (b *Base) Stopped() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.signals()
	return b.stopped
}

// Func is the Service whose run is a plain function.
type Func struct {
	Base
	run func(ctx context.Context)
}

// NewFunc returns the service that runs run; run must return once its
// context ended.
func NewFunc(run func(ctx context.Context)) *Func { return &Func{run: run} }

// Start runs the function (see Service).
func (f *Func) Start(ctx context.Context) error { return f.StartFunc(ctx, f.run) }
