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
	Held Held
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

// Held is the latest time a claim was known to be held: by a refresh, or
// by any other write the store accepted under the claim. It must be safe
// for concurrent use.
type Held interface {
	// Confirm records that the claim was held at t.
	Confirm(t time.Time)
	// At is the latest time the claim was known to be held.
	At() time.Time
}

// heartbeat is the refresh schedule of one claim.
type heartbeat struct {
	cfg   Config
	ctx   context.Context
	mu    sync.Mutex
	timer Timer
}

// Start schedules the claim's first refresh one interval from now. The
// refreshes run on ctx, and end for good when ctx ends: that cancels a
// refresh in flight, after which no callback runs, and the timer, should it
// fire once more, refreshes nothing and arms nothing.
func Start(ctx context.Context, cfg Config) {
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if ctx.Err() != nil {
		return
	}
	h := &heartbeat{cfg: cfg, ctx: ctx}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timer = cfg.Clock.AfterFunc(cfg.Interval, h.fire)
}

// fire runs one refresh and arms the next one an interval after this one
// began, at once when it took longer.
func (h *heartbeat) fire() {
	began := h.cfg.Clock.Now()
	if !h.beat() {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() == nil {
		h.timer.Reset(max(h.cfg.Interval-h.cfg.Clock.Now().Sub(began), 0))
	}
}

// beat refreshes the claim once and reports whether the heartbeat goes on.
func (h *heartbeat) beat() bool {
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
