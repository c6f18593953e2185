package docket

import (
	"strconv"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// cadence computes a schedule's ticks: a cron expression in its zone, or a
// fixed interval aligned to the schedule's start.
type cadence struct {
	cron  *Cron
	every time.Duration
}

// cadenceOfRow rebuilds the cadence of a stored schedule. A row written by
// another tool with an expression or zone this binary refuses is an error.
func cadenceOfRow(row dbgen.DocketSchedule) (cadence, error) {
	if row.IntervalSeconds != nil {
		if *row.IntervalSeconds < 1 {
			return cadence{}, scheduleError("every", strconv.FormatInt(*row.IntervalSeconds, 10)+"s", "must be at least one second")
		}
		return cadence{every: time.Duration(*row.IntervalSeconds) * time.Second}, nil
	}
	loc, err := loadZone(row.TimeZone)
	if err != nil {
		return cadence{}, err
	}
	c, err := ParseCron(deref(row.CronExpr), loc)
	if err != nil {
		return cadence{}, err
	}
	return cadence{cron: c}, nil
}

// loadZone loads an IANA zone name as a *ScheduleError on failure.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return nil, scheduleError("time zone", name, "is empty")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, scheduleError("time zone", name, "not a zone of the time zone database: %v", err)
	}
	return loc, nil
}

// first is the first tick of a schedule that starts at start.
func (c cadence) first(start time.Time) time.Time {
	if c.cron != nil {
		return c.cron.Next(start)
	}
	return start.Add(c.every)
}

// next is the tick after tick. For an interval it keeps the alignment of
// tick; for cron it is the expression's next firing (zero when none comes
// within the search horizon).
func (c cadence) next(tick time.Time) time.Time {
	if c.cron != nil {
		return c.cron.Next(tick)
	}
	return tick.Add(c.every)
}

// after is the first tick strictly after now of the ticks that continue
// from tick (itself a tick of the schedule).
func (c cadence) after(tick, now time.Time) time.Time {
	if c.cron != nil {
		return c.cron.Next(now)
	}
	if tick.After(now) {
		return tick
	}
	steps := now.Sub(tick)/c.every + 1
	return tick.Add(steps * c.every)
}

// latest is the most recent tick at or before now of the ticks that
// continue from tick, which must itself be at or before now.
func (c cadence) latest(tick, now time.Time) time.Time {
	if c.cron == nil {
		return tick.Add(now.Sub(tick) / c.every * c.every)
	}
	// Search back from now in widening windows, so a long outage costs a
	// few Next calls instead of one per missed tick.
	for window := time.Minute; ; window *= 2 {
		from := now.Add(-window)
		if !from.After(tick) {
			return c.walk(tick, now)
		}
		// The first firing at or after from.
		if t := c.cron.Next(from.Add(-time.Nanosecond)); !t.IsZero() && !t.After(now) {
			return c.walk(t, now)
		}
	}
}

// walk follows the firings from tick and returns the last one at or before
// now.
func (c cadence) walk(tick, now time.Time) time.Time {
	for {
		n := c.cron.Next(tick)
		if n.IsZero() || n.After(now) {
			return tick
		}
		tick = n
	}
}

// dueTicks returns the ticks a take at now inserts for a schedule whose next
// tick is next (at or before now) under policy, and the tick it continues
// from afterwards (strictly after now, or zero when a cron expression has
// no next firing within its horizon).
func (c cadence) dueTicks(next, now time.Time, policy MissedTicks) (ticks []time.Time, following time.Time) {
	if policy == MissedAll {
		for t := next; !t.IsZero() && !t.After(now) && len(ticks) < MaxMissedTicks; t = c.next(t) {
			ticks = append(ticks, t)
		}
	} else {
		ticks = []time.Time{c.latest(next, now)}
	}
	return ticks, c.after(ticks[len(ticks)-1], now)
}
