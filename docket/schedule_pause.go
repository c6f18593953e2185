package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// PauseSchedule stops a schedule's ticks until ResumeSchedule and bumps its
// version. A paused schedule inserts nothing and its paused time produces no
// runs, not even under MissedAll. Pausing a paused schedule writes nothing
// and returns it as it is. A missing schedule is ErrNotFound; a version
// mismatch (ExpectedVersion) is a *StaleVersionError (ErrStale) and writes
// nothing.
func (c *store) PauseSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opPauseSchedule, func() (PeriodicSchedule, error) {
		return c.editSchedule(ctx, scope, name, opts, func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error) {
			if row.Paused {
				return row, nil
			}
			return q.SetSchedulePaused(ctx, dbgen.SetSchedulePausedParams{ID: row.ID, Paused: true, NextTickAt: row.NextTickAt})
		})
	})
}

// ResumeSchedule lets a paused schedule tick again and bumps its version. Its
// next tick becomes the first of its ticks after now (by the caller's
// clock), keeping an interval's alignment, so the paused time inserts
// nothing. Resuming a schedule that is not paused writes nothing and returns
// it as it is. Errors are those of PauseSchedule; a stored cadence this
// binary cannot read is a *ScheduleError. The resume wakes listening
// Workers.
func (c *store) ResumeSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opResumeSchedule, func() (PeriodicSchedule, error) {
		resumed := false
		s, err := c.editSchedule(ctx, scope, name, opts, func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error) {
			if !row.Paused {
				return row, nil
			}
			cad, err := cadenceOfRow(row)
			if err != nil {
				return row, err
			}
			resumed = true
			next := cad.after(row.NextTickAt, time.Now())
			return q.SetSchedulePaused(ctx, dbgen.SetSchedulePausedParams{ID: row.ID, Paused: false, NextTickAt: next})
		})
		if err == nil && resumed {
			c.announceDue(ctx, c.queries, time.Time{})
		}
		return s, err
	})
}

// editSchedule locks the schedule, checks the expected version and applies
// edit in one transaction; any error rolls everything back.
func (c *store) editSchedule(ctx context.Context, scope Scope, name string, opts ScheduleWriteOptions,
	edit func(q *dbgen.Queries, row dbgen.DocketSchedule) (dbgen.DocketSchedule, error)) (PeriodicSchedule, error) {
	key, err := c.scheduleAddress(scope, name)
	if err != nil {
		return PeriodicSchedule{}, err
	}
	if err := opts.validate(); err != nil {
		return PeriodicSchedule{}, err
	}
	var written dbgen.DocketSchedule
	err = c.inTx(ctx, func(q *dbgen.Queries) error {
		row, err := q.LockSchedule(ctx, dbgen.LockScheduleParams{ScopeKey: key, Name: name})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: schedule %q in %s", ErrNotFound, name, scope)
		}
		if err != nil {
			return fmt.Errorf("docket: locking schedule: %w", err)
		}
		if err := opts.check(row.Version); err != nil {
			return err
		}
		written, err = edit(q, row)
		if err != nil && !errors.Is(err, ErrInvalidSchedule) {
			return fmt.Errorf("docket: writing schedule: %w", err)
		}
		return err
	})
	if err != nil {
		return PeriodicSchedule{}, err
	}
	return scheduleFromRow(written), nil
}
