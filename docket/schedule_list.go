package docket

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ListSchedules returns one page of schedules in (scope, name) order, of one
// scope or of all, with a keyset cursor: each page is one statement on the
// (scope, name) index, and a page with more after it carries Next.
func (c *store) ListSchedules(ctx context.Context, req ListSchedulesRequest) (SchedulePage, error) {
	return timed(ctx, c.telemetry, opListSchedules, func() (SchedulePage, error) {
		limit := req.Limit
		switch {
		case limit == 0:
			limit = DefaultListLimit
		case limit < 0 || limit > MaxListLimit:
			return SchedulePage{}, invalidArgument("list limit %d is outside 1..%d", req.Limit, MaxListLimit)
		}
		params := dbgen.ListSchedulesParams{PageLimit: int32(limit + 1)}
		if req.Scope != nil {
			key, err := c.runScopeKey(*req.Scope)
			if err != nil {
				return SchedulePage{}, err
			}
			params.ScopeKey = &key
		}
		if req.After != nil {
			key, err := c.runScopeKey(req.After.Scope)
			if err != nil {
				return SchedulePage{}, err
			}
			if err := requireStorable("cursor name", req.After.Name); err != nil {
				return SchedulePage{}, err
			}
			params.AfterScopeKey, params.AfterName = key, req.After.Name
		}
		rows, err := c.queries.ListSchedules(ctx, params)
		if err != nil {
			return SchedulePage{}, fmt.Errorf("docket: list schedules: %w", err)
		}
		var page SchedulePage
		if len(rows) > limit {
			rows = rows[:limit]
			last := rows[limit-1]
			page.Next = &ScheduleCursor{Scope: scopeOf(last.TenantID), Name: last.Name}
		}
		page.Schedules = make([]PeriodicSchedule, len(rows))
		for i, row := range rows {
			page.Schedules[i] = scheduleFromRow(row)
		}
		return page, nil
	})
}

// FetchSchedule returns the schedule name of scope, or ErrNotFound.
func (c *store) FetchSchedule(ctx context.Context, scope Scope, name string) (PeriodicSchedule, error) {
	return timed(ctx, c.telemetry, opFetchSchedule, func() (PeriodicSchedule, error) {
		key, err := c.scheduleAddress(scope, name)
		if err != nil {
			return PeriodicSchedule{}, err
		}
		row, err := c.queries.GetSchedule(ctx, dbgen.GetScheduleParams{ScopeKey: key, Name: name})
		if errors.Is(err, pgx.ErrNoRows) {
			return PeriodicSchedule{}, fmt.Errorf("%w: schedule %q in %s", ErrNotFound, name, scope)
		}
		if err != nil {
			return PeriodicSchedule{}, fmt.Errorf("docket: fetch schedule: %w", err)
		}
		return scheduleFromRow(row), nil
	})
}

// scheduleAddress validates the address of an existing schedule and returns
// its scope key.
func (c *store) scheduleAddress(scope Scope, name string) (string, error) {
	key, err := c.runScopeKey(scope)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", invalidArgument("schedule name is empty")
	}
	if err := requireStorable("schedule name", name); err != nil {
		return "", err
	}
	return key, nil
}
