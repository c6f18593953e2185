package docket

import (
	"strconv"
	"strings"
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

// Cron is a parsed five-field cron expression bound to a time zone. Fields
// are minute (0-59), hour (0-23), day of month (1-31), month (1-12) and day
// of week (0-6, Sunday is 0 or 7); each is "*", a number, a range "a-b", a
// step "*/n" or "a-b/n", or a comma-separated list of those. The
// descriptors @hourly, @daily (@midnight), @weekly, @monthly and @yearly
// (@annually) stand for "0 * * * *", "0 0 * * *", "0 0 * * 0", "0 0 1 * *"
// and "0 0 1 1 *".
//
// As in the classic cron, a day matches its day-of-month field and its
// day-of-week field when one of them starts with "*"; when both are
// restricted, a day matches either (so "0 0 1 * 1" fires on the first of
// each month and on every Monday).
//
// Times are local wall-clock times in the zone: across a daylight saving
// change a local time that does not exist (skipped forward) does not fire,
// and one that occurs twice (set back) fires once, at the instant Go's
// time.Date picks for it.
type Cron struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar record a field that starts with "*".
	domStar, dowStar bool
	loc              *time.Location
}

// cronHorizon bounds Next's search: the longest gap between two firings of
// a satisfiable expression is a 29 February eight years apart (2096-2104).
const cronHorizon = 9

// cronDescriptors are the named expressions.
var cronDescriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// cronField describes one field's name and bounds.
type cronField struct {
	name     string
	min, max int
}

var cronFields = [5]cronField{
	{"cron minute", 0, 59},
	{"cron hour", 0, 23},
	{"cron day-of-month", 1, 31},
	{"cron month", 1, 12},
	// 7 is accepted for Sunday and folded onto 0.
	{"cron day-of-week", 0, 7},
}

// ParseCron parses expr in loc (nil means UTC). A bad expression is a
// *ScheduleError naming the field and the reason (errors.Is
// ErrInvalidSchedule), as is one that can never fire, such as "0 0 30 2 *".
func ParseCron(expr string, loc *time.Location) (*Cron, error) {
	if loc == nil {
		loc = time.UTC
	}
	text := strings.TrimSpace(expr)
	if strings.HasPrefix(text, "@") {
		named, ok := cronDescriptors[text]
		switch {
		case !ok && strings.Fields(text)[0] == everyDescriptor:
			return nil, scheduleError("cron", expr, "%s DURATION is an interval, not firing times: a schedule's Cron takes it (as Every)", everyDescriptor)
		case !ok:
			return nil, scheduleError("cron", expr, "unknown descriptor; want @hourly, @daily, @weekly, @monthly or @yearly (a schedule's Cron also takes @every DURATION)")
		}
		text = named
	}
	parts := strings.Fields(text)
	if len(parts) != 5 {
		return nil, scheduleError("cron", expr, "want five fields (minute hour day-of-month month day-of-week), got %d", len(parts))
	}
	var sets [5]uint64
	for i, part := range parts {
		set, err := parseCronField(part, cronFields[i])
		if err != nil {
			return nil, err
		}
		sets[i] = set
	}
	if sets[4]&(1<<7) != 0 {
		sets[4] = sets[4]&^(1<<7) | 1
	}
	c := &Cron{
		minute: sets[0], hour: sets[1], dom: sets[2], month: sets[3], dow: sets[4],
		domStar: strings.HasPrefix(parts[2], "*"), dowStar: strings.HasPrefix(parts[4], "*"),
		loc: loc,
	}
	if !c.satisfiable() {
		return nil, scheduleError("cron", expr, "no day of any month matches it, so it never fires")
	}
	return c, nil
}

// parseCronField parses one field into a bit set of its values.
func parseCronField(text string, f cronField) (uint64, error) {
	var set uint64
	for item := range strings.SplitSeq(text, ",") {
		lo, hi, step, err := parseCronItem(item, f)
		if err != nil {
			return 0, scheduleError(f.name, text, "%s", err.Error())
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << v
		}
	}
	return set, nil
}

// cronItemError is the reason of a refused list item.
type cronItemError string

func (e cronItemError) Error() string { return string(e) }

// parseCronItem parses "*", "n", "a-b", "*/n" or "a-b/n".
func parseCronItem(item string, f cronField) (lo, hi, step int, err error) {
	rangeText, stepText, stepped := strings.Cut(item, "/")
	step = 1
	if stepped {
		step, err = strconv.Atoi(stepText)
		if err != nil || step < 1 {
			return 0, 0, 0, cronItemError("step " + strconv.Quote(stepText) + " is not a positive number")
		}
	}
	switch {
	case rangeText == "*":
		return f.min, f.max, step, nil
	case strings.Contains(rangeText, "-"):
		a, b, _ := strings.Cut(rangeText, "-")
		if lo, err = cronNumber(a, f); err != nil {
			return 0, 0, 0, err
		}
		if hi, err = cronNumber(b, f); err != nil {
			return 0, 0, 0, err
		}
		if lo > hi {
			return 0, 0, 0, cronItemError("range " + strconv.Quote(rangeText) + " runs backwards")
		}
		return lo, hi, step, nil
	case stepped:
		return 0, 0, 0, cronItemError("a step needs * or a range before it, got " + strconv.Quote(item))
	}
	n, err := cronNumber(rangeText, f)
	return n, n, 1, err
}

// cronNumber parses one value of field f.
func cronNumber(text string, f cronField) (int, error) {
	n, err := strconv.Atoi(text)
	if err != nil || text == "" || text[0] == '+' || text[0] == '-' {
		return 0, cronItemError(strconv.Quote(text) + " is not a number")
	}
	if n < f.min || n > f.max {
		return 0, cronItemError(strconv.Itoa(n) + " is outside " + strconv.Itoa(f.min) + "-" + strconv.Itoa(f.max))
	}
	return n, nil
}

// satisfiable reports whether some date matches the day fields: always
// when a day of week counts, else when some chosen month has a chosen day.
func (c *Cron) satisfiable() bool {
	if !c.dowStar {
		return true
	}
	longest := [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		for d := 1; d <= longest[m]; d++ {
			if c.dom&(1<<d) != 0 {
				return true
			}
		}
	}
	return false
}

// Next returns the first firing strictly after after, in the expression's
// time zone, or the zero time when none comes within nine years (only
// possible for a 29 February whose day of week must also match).
func (c *Cron) Next(after time.Time) time.Time {
	local := after.In(c.loc)
	y, mo, d := local.Date()
	// The wall clock is walked on a zone-free carrier; only candidates are
	// turned into instants of the zone.
	from := time.Date(y, mo, d, local.Hour(), local.Minute(), 0, 0, time.UTC).Add(time.Minute)
	day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
	end := day.AddDate(cronHorizon, 0, 0)
	for ; day.Before(end); day = day.AddDate(0, 0, 1) {
		if !c.dayMatches(day) {
			continue
		}
		if t, ok := c.firstOnDay(day, from, after); ok {
			return t
		}
	}
	return time.Time{}
}

// dayMatches applies the month and the day-of-month/day-of-week rule.
func (c *Cron) dayMatches(day time.Time) bool {
	if c.month&(1<<int(day.Month())) == 0 {
		return false
	}
	domOK := c.dom&(1<<day.Day()) != 0
	dowOK := c.dow&(1<<int(day.Weekday())) != 0
	switch {
	case c.domStar && c.dowStar:
		return true
	case c.domStar:
		return dowOK
	case c.dowStar:
		return domOK
	}
	return domOK || dowOK
}

// firstOnDay returns the first chosen wall time of day at or after from
// that exists in the zone and lies after after.
func (c *Cron) firstOnDay(day, from, after time.Time) (time.Time, bool) {
	for h := 0; h < 24; h++ {
		if c.hour&(1<<h) == 0 {
			continue
		}
		for m := 0; m < 60; m++ {
			if c.minute&(1<<m) == 0 {
				continue
			}
			wall := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
			if wall.Before(from) {
				continue
			}
			t := time.Date(day.Year(), day.Month(), day.Day(), h, m, 0, 0, c.loc)
			if t.Day() != day.Day() || t.Hour() != h || t.Minute() != m {
				// The zone skipped this wall time.
				continue
			}
			if t.After(after) {
				return t, true
			}
		}
	}
	return time.Time{}, false
}

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
		return v.resolveInterval("every", s.Every.String(), s.Every, s.TimeZone)
	}
	if fields := strings.Fields(s.Cron); len(fields) > 0 && fields[0] == everyDescriptor {
		// "@every DURATION" is an interval, stored as Every would be.
		if len(fields) != 2 {
			return scheduleError("cron", s.Cron, "%s takes one duration, such as \"%s 90s\" or \"%s 1h30m\"", everyDescriptor, everyDescriptor, everyDescriptor)
		}
		every, err := time.ParseDuration(fields[1])
		if err != nil {
			return scheduleError("cron", s.Cron, "%s takes a Go duration, such as 90s, 5m or 1h30m", everyDescriptor)
		}
		return v.resolveInterval("cron", s.Cron, every, s.TimeZone)
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

// everyDescriptor starts a Cron that is an interval: "@every 5m" is Every
// 5 minutes.
const everyDescriptor = "@every"

// resolveInterval checks an interval given as field (Every, or Cron's
// "@every DURATION") and makes it the cadence: whole seconds, at least
// one, and no time zone.
func (v *validatedSchedule) resolveInterval(field, text string, every time.Duration, zone string) error {
	if every < time.Second || every%time.Second != 0 {
		return scheduleError(field, text, "must be a whole number of seconds, at least one")
	}
	if zone != "" {
		return scheduleError("time zone", zone, "applies to Cron only")
	}
	seconds := int64(every / time.Second)
	v.seconds, v.zone, v.cadence = &seconds, "UTC", cadence{every: every}
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
