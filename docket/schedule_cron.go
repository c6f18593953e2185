package docket

import (
	"strconv"
	"strings"
	"time"
)

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
		if !ok {
			return nil, scheduleError("cron", expr, "unknown descriptor; want @hourly, @daily, @weekly, @monthly or @yearly")
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
