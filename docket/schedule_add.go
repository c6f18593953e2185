package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// AddSchedule stores a schedule whose ticks a Worker with
// WorkerConfig.Schedules inserts as runs (see ScheduleRunID). The first
// tick is the first one after s.Start (or after now). A bad definition is a
// *ScheduleError (errors.Is ErrInvalidSchedule and ErrInvalidArgument), a
// name its scope already uses is ErrDuplicateSchedule; neither writes
// anything. On success it wakes the domain's listening Workers, so one
// takes the new schedule into account at once.
func (c *store) AddSchedule(ctx context.Context, s NewSchedule) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opAddSchedule, func() (PeriodicSchedule, error) {
		v, err := c.validateSchedule(s, time.Now())
		if err != nil {
			return PeriodicSchedule{}, err
		}
		row, err := c.queries.InsertSchedule(ctx, dbgen.InsertScheduleParams{
			TenantID:        s.Scope.tenantColumn(),
			Name:            s.Name,
			GraphID:         s.GraphID,
			GraphHash:       s.GraphHash,
			State:           string(s.State),
			CronExpr:        v.cron,
			IntervalSeconds: v.seconds,
			TimeZone:        v.zone,
			MissedTicks:     string(v.missed),
			NextTickAt:      v.firstTick,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return PeriodicSchedule{}, fmt.Errorf("%w: %q in %s", ErrDuplicateSchedule, s.Name, s.Scope)
		}
		if err != nil {
			return PeriodicSchedule{}, fmt.Errorf("docket: add schedule: %w", err)
		}
		c.announceDue(ctx, c.queries, time.Time{})
		return scheduleFromRow(row), nil
	})
}
