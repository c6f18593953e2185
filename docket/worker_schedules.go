package docket

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/gen"
)

// ScheduleClock is the clock a Worker takes schedule ticks by: a tick is due
// when the clock has reached it. Nil in WorkerConfig means the wall clock;
// tests inject a clock of their own to drive ticks without waiting.
type ScheduleClock interface {
	// Now returns the clock's current time.
	Now() time.Time
	// At returns a channel that receives once the clock reaches t (at once
	// when it has already).
	At(t time.Time) <-chan time.Time
}

// wallClock is the ScheduleClock of real time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// takeSchedules runs the schedule taker until ctx ends: a pass at once, then
// one whenever the earliest next tick of the domain comes due, a
// notification arrives on wake (AddSchedule and ResumeSchedule send one) or
// the poll interval passed on the clock, whichever is first. It returns at
// once when WorkerConfig.Schedules is off.
func (w *Worker) takeSchedules(ctx context.Context, wake <-chan struct{}) {
	if !w.cfg.Schedules {
		return
	}
	clock := w.cfg.ScheduleClock
	failures := 0
	for {
		next, err := w.schedulePass(ctx, clock)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			backoff := errorBackoff(failures)
			w.logger.WarnContext(ctx, "docket worker schedule pass failed; trying again", "error", err.Error(), "retry_in", backoff)
			if !sleep(ctx, backoff) {
				return
			}
			continue
		}
		failures = 0
		deadline := clock.Now().Add(w.cfg.PollInterval)
		if !next.IsZero() && next.Before(deadline) {
			deadline = next
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-clock.At(deadline):
		}
	}
}

// schedulePass takes every tick due by the clock, one transaction per batch
// until a batch comes back short, and returns the earliest next tick of the
// domain (zero when no schedule is unpaused). Each taken tick is reported as
// an EventScheduleTick after its commit, the pass as an EventSchedulePass.
func (w *Worker) schedulePass(ctx context.Context, clock ScheduleClock) (time.Time, error) {
	taken := 0
	for {
		ticks, full, err := w.scheduleBatch(ctx, clock.Now())
		if err != nil {
			if ctx.Err() == nil {
				w.emit(WorkerEvent{Kind: EventSchedulePass, Ticks: taken, Err: err})
			}
			return time.Time{}, err
		}
		for _, t := range ticks {
			w.emit(WorkerEvent{Kind: EventScheduleTick, RunID: t.RunID, Scope: t.Scope, Schedule: t.Schedule, TickAt: t.At, Err: t.Err})
		}
		taken += len(ticks)
		if !full {
			break
		}
	}
	if taken > 0 {
		w.logger.DebugContext(ctx, "docket worker took schedule ticks", "ticks", taken)
	}
	callCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	next, err := w.client.queries.NextScheduleTick(callCtx)
	if errors.Is(err, pgx.ErrNoRows) {
		next, err = time.Time{}, nil
	}
	if err != nil {
		if ctx.Err() == nil {
			w.emit(WorkerEvent{Kind: EventSchedulePass, Ticks: taken, Err: err})
		}
		return time.Time{}, err
	}
	w.emit(WorkerEvent{Kind: EventSchedulePass, Ticks: taken})
	return next, nil
}

// scheduleBatch takes one batch of due ticks in a transaction of its own.
func (w *Worker) scheduleBatch(ctx context.Context, now time.Time) ([]ScheduleTick, bool, error) {
	callCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	var (
		ticks []ScheduleTick
		full  bool
	)
	err := w.client.inTx(callCtx, func(q *gen.Queries) error {
		var err error
		ticks, full, err = w.client.takeDueTicks(callCtx, q, now, DefaultScheduleBatch)
		return err
	})
	return ticks, full, err
}
