package docket

import (
	"strings"
	"time"
)

// validatedSchedule is a NewSchedule checked and resolved for the insert.
type validatedSchedule struct {
	key       string
	cadence   cadence
	cron      *string
	seconds   *int64
	zone      string
	missed    MissedTicks
	firstTick time.Time
}

// validateSchedule checks s under the client's tenant mode against now (the
// caller's clock, used when s.Start is zero) and computes its first tick.
// Definition errors are *ScheduleError; scope errors are those of runs.
func (c *store) validateSchedule(s NewSchedule, now time.Time) (validatedSchedule, error) {
	key, err := c.scopeKey(s.Scope)
	if err != nil {
		return validatedSchedule{}, err
	}
	if err := validateScheduleName(s.Scope, s.Name); err != nil {
		return validatedSchedule{}, err
	}
	if err := validateIdentifier("graph id", s.GraphID); err != nil {
		return validatedSchedule{}, err
	}
	if err := validateIdentifier("graph hash", s.GraphHash); err != nil {
		return validatedSchedule{}, err
	}
	if err := validateState(s.State); err != nil {
		return validatedSchedule{}, err
	}
	v := validatedSchedule{key: key, missed: s.MissedTicks, zone: s.TimeZone}
	switch v.missed {
	case "":
		v.missed = MissedSkip
	case MissedSkip, MissedAll:
	default:
		return validatedSchedule{}, scheduleError("missed ticks", string(s.MissedTicks), "want skip or all")
	}
	if err := v.resolveCadence(s); err != nil {
		return validatedSchedule{}, err
	}
	start := s.Start
	if start.IsZero() {
		start = now
	}
	v.firstTick = v.cadence.first(start.Truncate(time.Second))
	if requireStorableTime("Start", start) != nil || requireStorableTime("first tick", v.firstTick) != nil {
		return validatedSchedule{}, scheduleError("start", start.UTC().Format(time.RFC3339Nano),
			"the start and the first tick must lie in the range PostgreSQL's timestamptz holds")
	}
	return v, nil
}

// resolveCadence checks that exactly one of Cron and Every is set and
// parses it.
func (v *validatedSchedule) resolveCadence(s NewSchedule) error {
	switch {
	case s.Cron == "" && s.Every == 0:
		return scheduleError("cron", "", "a schedule needs Cron or Every")
	case s.Cron != "" && s.Every != 0:
		return scheduleError("every", s.Every.String(), "a schedule takes Cron or Every, not both")
	case s.Every != 0:
		if s.Every < time.Second || s.Every%time.Second != 0 {
			return scheduleError("every", s.Every.String(), "must be a whole number of seconds, at least one")
		}
		if s.TimeZone != "" {
			return scheduleError("time zone", s.TimeZone, "applies to Cron only")
		}
		seconds := int64(s.Every / time.Second)
		v.seconds, v.zone, v.cadence = &seconds, "UTC", cadence{every: s.Every}
		return nil
	}
	if v.zone == "" {
		v.zone = "UTC"
	}
	loc, err := loadZone(v.zone)
	if err != nil {
		return err
	}
	cron, err := ParseCron(s.Cron, loc)
	if err != nil {
		return err
	}
	expr := strings.TrimSpace(s.Cron)
	v.cron, v.cadence = &expr, cadence{cron: cron}
	return nil
}

// validateScheduleName applies the identifier rules, refuses "/" (the
// separator of tick run ids) and requires room for the tick run id.
func validateScheduleName(scope Scope, name string) error {
	if err := validateIdentifier("schedule name", name); err != nil {
		return &ScheduleError{Field: "name", Value: name, Reason: strings.TrimPrefix(err.Error(), ErrInvalidArgument.Error()+": ")}
	}
	tenant, _ := scope.TenantID()
	switch {
	case len(name) > MaxScheduleNameBytes:
		return scheduleError("name", name, "is %d bytes, over the %d-byte limit", len(name), MaxScheduleNameBytes)
	case strings.Contains(name, "/"):
		return scheduleError("name", name, "contains \"/\", which separates the tenant id from the name in tick run ids")
	case len(tenant)+len(name)+scheduleRunIDOverhead > MaxIdentifierBytes:
		return scheduleError("name", name, "with the tenant id makes tick run ids longer than %d bytes; shorten it to %d bytes",
			MaxIdentifierBytes, MaxIdentifierBytes-scheduleRunIDOverhead-len(tenant))
	}
	return nil
}
