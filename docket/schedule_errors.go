package docket

import (
	"errors"
	"fmt"
)

// ErrInvalidSchedule reports a schedule definition Docket refuses: a cron
// expression, interval, time zone, name or missed-tick policy outside its
// documented domain. Every *ScheduleError matches it, and ErrInvalidArgument
// too, so callers that only check for invalid input need nothing new.
var ErrInvalidSchedule = errors.New("docket: invalid schedule")

// ScheduleError says which part of a schedule definition was refused and
// why; nothing was written.
type ScheduleError struct {
	// Field names the refused part: "cron", "cron minute", "cron hour",
	// "cron day-of-month", "cron month", "cron day-of-week", "every",
	// "time zone", "name", "missed ticks" or "start".
	Field string
	// Value is the refused text, as given.
	Value string
	// Reason says what is wrong with it.
	Reason string
}

func (e *ScheduleError) Error() string {
	return fmt.Sprintf("docket: invalid schedule: %s %q: %s", e.Field, e.Value, e.Reason)
}

// Is makes errors.Is hold for ErrInvalidSchedule and ErrInvalidArgument.
func (e *ScheduleError) Is(target error) bool {
	return target == ErrInvalidSchedule || target == ErrInvalidArgument
}

// scheduleError returns a *ScheduleError.
func scheduleError(field, value, format string, args ...any) error {
	return &ScheduleError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// ErrDuplicateSchedule reports an AddSchedule whose name its scope already
// uses; nothing was written.
var ErrDuplicateSchedule = errors.New("docket: duplicate schedule name")
