package maintenance

import (
	"context"
	"log/slog"
	"time"

	"github.com/docketrun/docket-go/internal/startstop"
)

// ScheduleConfig is what a ScheduleTaker takes ticks through, when it
// looks, and whom it tells; T is the store's description of one taken
// tick, which the taker only hands on. PollInterval, Clock, TakeBatch,
// NextTick and Backoff are required.
type ScheduleConfig[T any] struct {
	// PollInterval bounds the wait between passes, on the clock.
	PollInterval time.Duration
	// Clock is the time ticks are due by and waits are measured on.
	Clock ScheduleClock
	// Wake, when it receives, starts a pass at once; nil never does.
	Wake <-chan struct{}
	// TakeBatch takes, in one transaction, a batch of the ticks due at
	// now, and reports whether the batch was full, so more may be due.
	TakeBatch func(ctx context.Context, now time.Time) (ticks []T, full bool, err error)
	// NextTick returns the earliest next tick of any unpaused schedule,
	// the zero time when there is none.
	NextTick func(ctx context.Context) (time.Time, error)
	// Backoff is the wait after the given number (>= 1) of failed passes
	// in a row.
	Backoff func(failures int) time.Duration
	// Wait waits d unless ctx ends first and reports whether the whole
	// wait passed; nil waits on a timer of the time package.
	Wait func(ctx context.Context, d time.Duration) bool
	// Logger receives a debug record per pass that took ticks and a
	// warning per failed pass; nil discards them.
	Logger *slog.Logger
	// OnTick, when set, hears of each taken tick once its batch committed.
	OnTick func(tick T)
	// OnPass, when set, hears of each pass that ended: the ticks it took
	// and its error (nil on success). A pass cut short by the taker's stop
	// is not reported.
	OnPass func(ticks int, err error)
}

// ScheduleTaker takes due schedule ticks: a pass when it starts, then one
// whenever the earliest next tick comes due, Wake receives or the poll
// interval passed on the clock, whichever is first. A failed pass is
// retried after Backoff instead, until one succeeds.
type ScheduleTaker[T any] struct {
	startstop.Base
	cfg ScheduleConfig[T]
}

// NewScheduleTaker returns the taker of cfg, not yet started.
func NewScheduleTaker[T any](cfg ScheduleConfig[T]) *ScheduleTaker[T] {
	if cfg.Wait == nil {
		cfg.Wait = Sleep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &ScheduleTaker[T]{cfg: cfg}
}

// Start runs the taker until ctx ends or Stop is called (see
// startstop.Service).
func (s *ScheduleTaker[T]) Start(ctx context.Context) error { return s.StartFunc(ctx, s.run) }

// run is the taker's goroutine.
func (s *ScheduleTaker[T]) run(ctx context.Context) {
	clock := s.cfg.Clock
	failures := 0
	for {
		next, err := s.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			backoff := s.cfg.Backoff(failures)
			s.cfg.Logger.WarnContext(ctx, "docket worker schedule pass failed; trying again", "error", err.Error(), "retry_in", backoff)
			if !s.cfg.Wait(ctx, backoff) {
				return
			}
			continue
		}
		failures = 0
		deadline := clock.Now().Add(s.cfg.PollInterval)
		if !next.IsZero() && next.Before(deadline) {
			deadline = next
		}
		select {
		case <-ctx.Done():
			return
		case <-s.cfg.Wake:
		case <-clock.At(deadline):
		}
	}
}

// pass takes every tick due by the clock, one batch after another until a
// batch comes back short, and returns the earliest next tick.
func (s *ScheduleTaker[T]) pass(ctx context.Context) (time.Time, error) {
	taken := 0
	for {
		ticks, full, err := s.cfg.TakeBatch(ctx, s.cfg.Clock.Now())
		if err != nil {
			s.failed(ctx, taken, err)
			return time.Time{}, err
		}
		for _, t := range ticks {
			if s.cfg.OnTick != nil {
				s.cfg.OnTick(t)
			}
		}
		taken += len(ticks)
		if !full {
			break
		}
	}
	if taken > 0 {
		s.cfg.Logger.DebugContext(ctx, "docket worker took schedule ticks", "ticks", taken)
	}
	next, err := s.cfg.NextTick(ctx)
	if err != nil {
		s.failed(ctx, taken, err)
		return time.Time{}, err
	}
	if s.cfg.OnPass != nil {
		s.cfg.OnPass(taken, nil)
	}
	return next, nil
}

// failed reports a pass that failed after taking taken ticks, unless the
// taker's stop cut it short.
func (s *ScheduleTaker[T]) failed(ctx context.Context, taken int, err error) {
	if ctx.Err() == nil && s.cfg.OnPass != nil {
		s.cfg.OnPass(taken, err)
	}
}

// Sleep waits d on a timer unless ctx ends first, and reports whether the
// full wait passed. It is the schedule taker's default Wait, and the
// Worker's pause between retries.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
