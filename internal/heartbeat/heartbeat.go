package heartbeat

import (
	"context"
	"sync"
	"time"
)

// Config is what a heartbeat refreshes, how often, and whom it tells.
// Every field but Clock is required.
type Config struct {
	// Interval separates the starts of two refreshes and bounds each one.
	Interval time.Duration
	// TTL is how long a claim may go unconfirmed before it is presumed
	// lost.
	TTL time.Duration
	// Refresh refreshes the claim once.
	Refresh func(ctx context.Context) error
	// Lost reports whether a refresh error means the store no longer
	// shows the claim.
	Lost func(err error) bool
	// Held is the claim's confirmation time, which each successful
	// refresh advances and TTL is measured from.
	Held *Held
	// Clock is the time source; nil is SystemClock.
	Clock Clock
	// OnLost hears of a refresh that found the claim gone; the heartbeat
	// has ended. Each callback gets the heartbeat's context.
	OnLost func(ctx context.Context, err error)
	// OnFailed hears of any other failed refresh.
	OnFailed func(ctx context.Context, err error)
	// OnExpired hears, after OnFailed, that the claim went unconfirmed for
	// TTL; the heartbeat has ended.
	OnExpired func(ctx context.Context)
}

// Heartbeat is the refresh schedule of one claim. Its methods are safe for
// concurrent use.
type Heartbeat struct {
	cfg Config

	mu      sync.Mutex
	ctx     context.Context
	cancel  context.CancelFunc
	timer   Timer
	stopped bool
}

// New returns the heartbeat of cfg, not yet started.
func New(cfg Config) *Heartbeat {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	return &Heartbeat{cfg: cfg}
}

// Start schedules the first refresh one interval from now; refreshes run on
// ctx. It does nothing on a heartbeat already started or stopped.
func (h *Heartbeat) Start(ctx context.Context) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped || h.timer != nil {
		return
	}
	h.ctx, h.cancel = context.WithCancel(ctx)
	h.timer = h.cfg.Clock.AfterFunc(h.cfg.Interval, h.fire)
}

// Stop ends the heartbeat for good and cancels a refresh in flight; no
// callback runs after the refresh in flight returns.
func (h *Heartbeat) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	if h.timer != nil {
		h.cancel()
		h.timer.Stop()
	}
}

// fire runs one refresh and arms the next one an interval after this one
// began, at once when it took longer.
func (h *Heartbeat) fire() {
	began := h.cfg.Clock.Now()
	if !h.beat() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.timer.Reset(max(h.cfg.Interval-h.cfg.Clock.Now().Sub(began), 0))
	}
}

// beat refreshes the claim once and reports whether the heartbeat goes on.
func (h *Heartbeat) beat() bool {
	ctx := h.ctx
	if ctx.Err() != nil {
		return false
	}
	cfg := h.cfg
	callCtx, cancel := context.WithTimeout(ctx, cfg.Interval)
	err := cfg.Refresh(callCtx)
	cancel()
	switch {
	case err == nil:
		cfg.Held.Confirm(cfg.Clock.Now())
		return true
	case ctx.Err() != nil:
		return false
	case cfg.Lost(err):
		cfg.OnLost(ctx, err)
		return false
	}
	cfg.OnFailed(ctx, err)
	if cfg.Clock.Now().Sub(cfg.Held.At()) >= cfg.TTL {
		cfg.OnExpired(ctx)
		return false
	}
	return true
}
