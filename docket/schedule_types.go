package docket

import (
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// MissedTicks is what a schedule does with the ticks that came due while no
// Worker took them (everything was down, or the schedule's Workers were
// busy for longer than a tick).
type MissedTicks string

// The missed-tick policies.
const (
	// MissedSkip, the default, inserts one run for the most recent due tick
	// only and continues from the first tick after the taker's clock.
	MissedSkip MissedTicks = "skip"
	// MissedAll inserts one run per due tick, oldest first, up to
	// MaxMissedTicks in one take; the due ticks beyond those are skipped and
	// the schedule continues from the first tick after the taker's clock.
	MissedAll MissedTicks = "all"
)

// MaxMissedTicks bounds the runs one take of a MissedAll schedule inserts.
const MaxMissedTicks = 100

// MaxScheduleNameBytes is the longest schedule name accepted, in bytes.
const MaxScheduleNameBytes = 100

// NewSchedule describes a schedule to add: exactly one of Cron and Every.
type NewSchedule struct {
	// Scope owns the schedule and every run it inserts; Tenantless is
	// refused under TenantRequired.
	Scope Scope
	// Name identifies the schedule in its scope: the identifier rules of
	// run ids, at most MaxScheduleNameBytes, without "/". The scope's
	// tenant id and the name together must leave room for the tick's run
	// id (see ScheduleRunID).
	Name string
	// GraphID, GraphHash and State are those of every run a tick inserts,
	// with NewRun's rules: all three are required. A nil State is
	// ErrInvalidArgument, as for NewRun (json.RawMessage(`{}`) is the empty
	// document); "docket schedules add" requires --state by the same rule.
	GraphID   string
	GraphHash string
	State     json.RawMessage
	// Cron is a five-field cron expression or descriptor (see ParseCron),
	// read in TimeZone.
	Cron string
	// Every is a fixed interval: whole seconds, at least one second. The
	// ticks are Start + k·Every for k = 1, 2, ...
	Every time.Duration
	// TimeZone is the IANA zone Cron is read in (time.LoadLocation);
	// empty means "UTC". Refused with Every, which no zone changes.
	TimeZone string
	// MissedTicks is the missed-tick policy; empty means MissedSkip.
	MissedTicks MissedTicks
	// Start anchors the ticks: an interval schedule ticks at Start +
	// k·Every, a cron schedule first fires at its first time after Start.
	// Zero means now by the caller's clock. It is truncated to the second.
	Start time.Time
}

// PeriodicSchedule is the stored view of a schedule of periodic runs.
type PeriodicSchedule struct {
	// Scope owns the schedule.
	Scope Scope
	// Name identifies it in its scope.
	Name string
	// GraphID, GraphHash and State are those of the runs it inserts.
	GraphID   string
	GraphHash string
	State     json.RawMessage
	// Cron is the cron expression, or "" for an interval schedule.
	Cron string
	// Every is the interval, or zero for a cron schedule.
	Every time.Duration
	// TimeZone is the zone Cron is read in.
	TimeZone string
	// MissedTicks is the missed-tick policy.
	MissedTicks MissedTicks
	// Paused reports a paused schedule; PausedAt is when it was paused.
	Paused   bool
	PausedAt *time.Time
	// NextTickAt is the next tick to take.
	NextTickAt time.Time
	// LastTickAt is the latest tick taken, nil before the first.
	LastTickAt *time.Time
	// CreatedAt and UpdatedAt are the database times of the insert and of
	// the latest write (an edit or a taken tick).
	CreatedAt time.Time
	UpdatedAt time.Time
	// Version counts operator edits (add, pause, resume) for
	// compare-and-set; taking ticks leaves it alone.
	Version int64
}

// ScheduleWriteOptions configures one schedule edit.
type ScheduleWriteOptions struct {
	// ExpectedVersion, when set, makes the edit a compare-and-set: it
	// applies only if the schedule's version equals it, and otherwise fails
	// with a *StaleVersionError (errors.Is ErrStale) and writes nothing.
	ExpectedVersion *int64
}

// validate rejects a negative expected version, which could never match.
func (o ScheduleWriteOptions) validate() error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion < 1 {
		return invalidArgument("expected version %d is below 1, the version of a new schedule", *o.ExpectedVersion)
	}
	return nil
}

// check compares the current version with the expected one, if any.
func (o ScheduleWriteOptions) check(current int64) error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion != current {
		return &StaleVersionError{Expected: *o.ExpectedVersion, Current: current}
	}
	return nil
}

// ScheduleCursor is an exclusive ListSchedules position: the last schedule
// of a page.
type ScheduleCursor struct {
	// Scope and Name are those of the last listed schedule.
	Scope Scope
	Name  string
}

// ListSchedulesRequest selects one page of schedules in (scope, name) order,
// the tenantless scope first.
type ListSchedulesRequest struct {
	// Scope keeps only this scope's schedules when set; nil lists every
	// scope.
	Scope *Scope
	// After continues strictly after this cursor; nil starts at the first.
	After *ScheduleCursor
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// SchedulePage is one page of ListSchedules.
type SchedulePage struct {
	// Schedules are in (scope, name) order.
	Schedules []PeriodicSchedule
	// Next continues the listing; nil when this is the last page.
	Next *ScheduleCursor
}

// scheduleFromRow maps a stored row to its public view.
func scheduleFromRow(row dbgen.DocketSchedule) PeriodicSchedule {
	s := PeriodicSchedule{
		Scope:       scopeOf(row.TenantID),
		Name:        row.Name,
		GraphID:     row.GraphID,
		GraphHash:   row.GraphHash,
		State:       json.RawMessage(row.State),
		Cron:        deref(row.CronExpr),
		TimeZone:    row.TimeZone,
		MissedTicks: MissedTicks(row.MissedTicks),
		Paused:      row.Paused,
		PausedAt:    row.PausedAt,
		NextTickAt:  row.NextTickAt,
		LastTickAt:  row.LastTickAt,
		CreatedAt:   row.CreatedAt,
		UpdatedAt:   row.UpdatedAt,
		Version:     row.Version,
	}
	if row.IntervalSeconds != nil {
		s.Every = time.Duration(*row.IntervalSeconds) * time.Second
	}
	return s
}
