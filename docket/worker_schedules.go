package docket

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/maintenance"
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

// scheduleTaker returns the schedule taker of w: it takes ticks through
// w's client by w's ScheduleClock, wakes on wake (AddSchedule and
// ResumeSchedule notify) and reports each taken tick as an
// EventScheduleTick, after its commit, and each pass as an
// EventSchedulePass.
func (w *Worker) scheduleTaker(wake <-chan struct{}) *maintenance.ScheduleTaker[ScheduleTick] {
	return maintenance.NewScheduleTaker(maintenance.ScheduleConfig[ScheduleTick]{
		PollInterval: w.cfg.PollInterval,
		Clock:        w.cfg.ScheduleClock,
		Wake:         wake,
		TakeBatch:    w.scheduleBatch,
		NextTick:     w.nextScheduleTick,
		Backoff:      errorBackoff,
		Wait:         sleep,
		Logger:       w.logger,
		OnTick: func(t ScheduleTick) {
			w.emit(WorkerEvent{Kind: EventScheduleTick, RunID: t.RunID, Scope: t.Scope, Schedule: t.Schedule, TickAt: t.At, Err: t.Err})
		},
		OnPass: func(ticks int, err error) {
			w.emit(WorkerEvent{Kind: EventSchedulePass, Ticks: ticks, Err: err})
		},
	})
}

// nextScheduleTick returns the earliest next tick of the domain, the zero
// time when no schedule is unpaused.
func (w *Worker) nextScheduleTick(ctx context.Context) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	next, err := w.client.queries.NextScheduleTick(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	return next, err
}

// scheduleBatch takes one batch of due ticks in a transaction of its own.
func (w *Worker) scheduleBatch(ctx context.Context, now time.Time) ([]ScheduleTick, bool, error) {
	callCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
	var (
		ticks []ScheduleTick
		full  bool
	)
	err := w.client.inTx(callCtx, func(q *dbgen.Queries) error {
		var err error
		ticks, full, err = w.client.takeDueTicks(callCtx, q, now, DefaultScheduleBatch)
		return err
	})
	return ticks, full, err
}
