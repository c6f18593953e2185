package docket

import (
	"errors"
	"slices"
	"testing"
	"time"
)

func TestCadenceDueTicks(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	quarter, err := ParseCron("*/15 * * * *", nil)
	if err != nil {
		t.Fatal(err)
	}
	yearly, err := ParseCron("@yearly", berlin)
	if err != nil {
		t.Fatal(err)
	}
	nightly, err := ParseCron("30 2 * * *", berlin)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name          string
		cad           cadence
		next, now     string
		policy        MissedTicks
		ticks         []string
		wantFollowing string
	}{
		{"interval on time", cadence{every: time.Minute}, "2026-12-01T10:01:00Z", "2026-12-01T10:01:00Z", MissedSkip,
			[]string{"2026-12-01T10:01:00Z"}, "2026-12-01T10:02:00Z"},
		{"interval skip", cadence{every: time.Minute}, "2026-12-01T10:01:00Z", "2026-12-01T10:05:30Z", MissedSkip,
			[]string{"2026-12-01T10:05:00Z"}, "2026-12-01T10:06:00Z"},
		{"interval all", cadence{every: time.Minute}, "2026-12-01T10:01:00Z", "2026-12-01T10:03:59Z", MissedAll,
			[]string{"2026-12-01T10:01:00Z", "2026-12-01T10:02:00Z", "2026-12-01T10:03:00Z"}, "2026-12-01T10:04:00Z"},
		{"cron skip", cadence{cron: quarter}, "2026-12-01T10:15:00Z", "2026-12-03T10:20:00Z", MissedSkip,
			[]string{"2026-12-03T10:15:00Z"}, "2026-12-03T10:30:00Z"},
		{"cron all", cadence{cron: quarter}, "2026-12-01T10:15:00Z", "2026-12-01T10:45:00Z", MissedAll,
			[]string{"2026-12-01T10:15:00Z", "2026-12-01T10:30:00Z", "2026-12-01T10:45:00Z"}, "2026-12-01T11:00:00Z"},
		// Years of outage cost a few widening windows, not one step per tick.
		{"sparse cron skip", cadence{cron: yearly}, "2020-01-01T00:00:00+01:00", "2026-06-01T00:00:00Z", MissedSkip,
			[]string{"2026-01-01T00:00:00+01:00"}, "2027-01-01T00:00:00+01:00"},
		// The missed 02:30 of the spring-forward night does not exist.
		{"cron all across DST", cadence{cron: nightly}, "2026-03-28T02:30:00+01:00", "2026-03-30T12:00:00+02:00", MissedAll,
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-30T02:30:00+02:00"}, "2026-03-31T02:30:00+02:00"},
	}
	for _, tc := range cases {
		ticks, following := tc.cad.dueTicks(utc(tc.next), utc(tc.now), tc.policy)
		var got []string
		for _, tk := range ticks {
			got = append(got, tk.UTC().Format(time.RFC3339))
		}
		var want []string
		for _, w := range tc.ticks {
			want = append(want, utc(w).UTC().Format(time.RFC3339))
		}
		if !slices.Equal(got, want) || !following.Equal(utc(tc.wantFollowing)) {
			t.Errorf("%s: ticks %v following %s, want %v following %s", tc.name, got,
				following.UTC().Format(time.RFC3339), want, utc(tc.wantFollowing).UTC().Format(time.RFC3339))
		}
	}
}

func TestCadenceAllIsCapped(t *testing.T) {
	start := utc("2026-12-01T10:00:00Z")
	ticks, following := cadence{every: time.Second}.dueTicks(start, start.Add(time.Hour), MissedAll)
	if len(ticks) != MaxMissedTicks || !ticks[0].Equal(start) || !ticks[MaxMissedTicks-1].Equal(start.Add(99*time.Second)) {
		t.Fatalf("got %d ticks from %s to %s, want %d from %s", len(ticks), ticks[0], ticks[len(ticks)-1], MaxMissedTicks, start)
	}
	if !following.Equal(start.Add(time.Hour + time.Second)) {
		t.Fatalf("following %s, want the first tick after now", following)
	}
}

func TestCadenceAfterKeepsAlignment(t *testing.T) {
	c := cadence{every: 10 * time.Second}
	tick := utc("2026-12-01T10:00:00Z")
	for _, tc := range []struct{ now, want string }{
		{"2026-12-01T09:59:00Z", "2026-12-01T10:00:00Z"},
		{"2026-12-01T10:00:00Z", "2026-12-01T10:00:10Z"},
		{"2026-12-01T10:00:09Z", "2026-12-01T10:00:10Z"},
		{"2026-12-01T11:00:05Z", "2026-12-01T11:00:10Z"},
	} {
		if got := c.after(tick, utc(tc.now)); !got.Equal(utc(tc.want)) {
			t.Errorf("after %s: %s, want %s", tc.now, got, tc.want)
		}
	}
}

func TestScheduleRunID(t *testing.T) {
	tick := time.Date(2026, 12, 1, 11, 30, 0, 0, mustZone(t, "Europe/Berlin"))
	if got := ScheduleRunID(Tenant("a/b"), "nightly", tick); got != "schedule:a/b/nightly@2026-12-01T10:30:00Z" {
		t.Errorf("tenant run id %q", got)
	}
	if got := ScheduleRunID(Tenantless, "nightly", tick); got != "schedule:nightly@2026-12-01T10:30:00Z" {
		t.Errorf("tenantless run id %q", got)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestCronNextUTC(t *testing.T) {
	cases := []struct {
		expr, after, want string
	}{
		{"*/15 * * * *", "2026-12-01T10:07:30Z", "2026-12-01T10:15:00Z"},
		{"*/15 * * * *", "2026-12-01T10:15:00Z", "2026-12-01T10:30:00Z"},
		{"* * * * *", "2026-12-31T23:59:59Z", "2027-01-01T00:00:00Z"},
		{"0 9 * * 1-5", "2026-12-04T09:00:00Z", "2026-12-07T09:00:00Z"},
		{"5-10/2 3 * * *", "2026-12-01T03:06:00Z", "2026-12-01T03:07:00Z"},
		{"5-10/2 3 * * *", "2026-12-01T03:09:00Z", "2026-12-02T03:05:00Z"},
		{"0,30 8,20 * * *", "2026-12-01T08:30:00Z", "2026-12-01T20:00:00Z"},
		{"0 12 31 * *", "2026-11-01T00:00:00Z", "2026-12-31T12:00:00Z"},
		{"0 0 29 2 *", "2026-03-01T00:00:00Z", "2028-02-29T00:00:00Z"},
		// Both day fields restricted: either matches.
		{"0 0 1 * 1", "2026-12-01T00:00:00Z", "2026-12-07T00:00:00Z"},
		{"0 0 13 * 5", "2026-12-01T00:00:00Z", "2026-12-04T00:00:00Z"},
		// A day field starting with "*" is unrestricted: both must match.
		{"0 0 */2 * 1", "2026-12-01T00:00:00Z", "2026-12-07T00:00:00Z"},
		{"0 0 * * 7", "2026-12-01T00:00:00Z", "2026-12-06T00:00:00Z"},
		{"0 0 * * 0", "2026-12-01T00:00:00Z", "2026-12-06T00:00:00Z"},
		{"0 0 * * 5-7", "2026-12-06T00:00:00Z", "2026-12-11T00:00:00Z"},
		{"@hourly", "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"},
		{"@daily", "2026-12-01T10:00:00Z", "2026-12-02T00:00:00Z"},
		{"@midnight", "2026-12-01T10:00:00Z", "2026-12-02T00:00:00Z"},
		{"@weekly", "2026-12-01T10:00:00Z", "2026-12-06T00:00:00Z"},
		{"@monthly", "2026-12-15T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"@yearly", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"@annually", "2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"},
	}
	for _, tc := range cases {
		c, err := ParseCron(tc.expr, nil)
		if err != nil {
			t.Fatalf("ParseCron(%q): %v", tc.expr, err)
		}
		if got := c.Next(utc(tc.after)); !got.Equal(utc(tc.want)) {
			t.Errorf("%q after %s: got %s, want %s", tc.expr, tc.after, got.UTC().Format(time.RFC3339), tc.want)
		}
	}
}

// TestCronNextDST pins the daylight saving rule in Europe/Berlin: on
// 2026-03-29 local time jumps from 02:00 to 03:00 (a 02:30 does not exist
// and is skipped), on 2026-10-25 it falls back from 03:00 to 02:00 (02:00 to
// 02:59 occur twice and fire once, at the second occurrence, the one
// time.Date picks).
func TestCronNextDST(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	cases := []struct {
		expr, after, want string
	}{
		{"30 2 * * *", "2026-03-28T12:00:00+01:00", "2026-03-30T02:30:00+02:00"},
		{"0 * * * *", "2026-03-29T01:30:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"*/30 * * * *", "2026-03-29T01:30:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"0 3 * * *", "2026-03-28T12:00:00+01:00", "2026-03-29T03:00:00+02:00"},
		{"30 2 * * *", "2026-10-25T00:00:00+02:00", "2026-10-25T02:30:00+01:00"},
		{"30 2 * * *", "2026-10-25T02:30:00+01:00", "2026-10-26T02:30:00+01:00"},
		{"30 2 * * *", "2026-10-25T02:10:00+02:00", "2026-10-25T02:30:00+01:00"},
		{"0 * * * *", "2026-10-25T01:30:00+02:00", "2026-10-25T02:00:00+01:00"},
		{"0 * * * *", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"},
		{"*/30 * * * *", "2026-10-25T02:30:00+01:00", "2026-10-25T03:00:00+01:00"},
		// Local midnight, not UTC midnight.
		{"@daily", "2026-12-01T10:00:00+01:00", "2026-12-02T00:00:00+01:00"},
	}
	for _, tc := range cases {
		c, err := ParseCron(tc.expr, berlin)
		if err != nil {
			t.Fatalf("ParseCron(%q): %v", tc.expr, err)
		}
		got := c.Next(utc(tc.after))
		if !got.Equal(utc(tc.want)) {
			t.Errorf("%q after %s: got %s, want %s", tc.expr, tc.after, got.Format(time.RFC3339), tc.want)
		}
		if got.Location() != berlin {
			t.Errorf("%q: Next is in %v, want Europe/Berlin", tc.expr, got.Location())
		}
	}
}

// TestCronFallBackFiresOnce walks an every-minute expression across the
// fall-back night: each local wall time of the repeated hour fires once.
func TestCronFallBackFiresOnce(t *testing.T) {
	berlin := mustZone(t, "Europe/Berlin")
	c, err := ParseCron("* * * * *", berlin)
	if err != nil {
		t.Fatal(err)
	}
	at := utc("2026-10-25T01:00:00+02:00")
	seen := map[string]int{}
	for at.Before(utc("2026-10-25T04:00:00+01:00")) {
		at = c.Next(at)
		seen[at.Format("15:04")]++
	}
	// 01:01..03:59 local plus 04:00: 179 distinct wall times, none twice.
	if len(seen) != 180 {
		t.Fatalf("got %d distinct wall times, want 180", len(seen))
	}
	for wall, n := range seen {
		if n != 1 {
			t.Errorf("wall time %s fired %d times", wall, n)
		}
	}
}

// TestCronLongestGap: 2100 is no leap year, so a 29 February waits eight
// years, inside Next's search horizon.
func TestCronLongestGap(t *testing.T) {
	c, err := ParseCron("0 0 29 2 *", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Next(utc("2096-03-01T00:00:00Z")); !got.Equal(utc("2104-02-29T00:00:00Z")) {
		t.Fatalf("got %s, want 2104-02-29", got)
	}
}

func TestParseCronErrors(t *testing.T) {
	cases := []struct {
		expr, field, reason string
	}{
		{"", "cron", "want five fields (minute hour day-of-month month day-of-week), got 0"},
		{"* * * *", "cron", "want five fields (minute hour day-of-month month day-of-week), got 4"},
		{"* * * * * *", "cron", "want five fields (minute hour day-of-month month day-of-week), got 6"},
		{"@reboot", "cron", "unknown descriptor; want @hourly, @daily, @weekly, @monthly or @yearly (a schedule's Cron also takes @every DURATION)"},
		{"@every 5m", "cron", "@every DURATION is an interval, not firing times: a schedule's Cron takes it (as Every)"},
		{"60 * * * *", "cron minute", "60 is outside 0-59"},
		{"* 24 * * *", "cron hour", "24 is outside 0-23"},
		{"* * 0 * *", "cron day-of-month", "0 is outside 1-31"},
		{"* * * 13 *", "cron month", "13 is outside 1-12"},
		{"* * * * 8", "cron day-of-week", "8 is outside 0-7"},
		{"5-1 * * * *", "cron minute", `range "5-1" runs backwards`},
		{"*/0 * * * *", "cron minute", `step "0" is not a positive number`},
		{"*/x * * * *", "cron minute", `step "x" is not a positive number`},
		{"a * * * *", "cron minute", `"a" is not a number`},
		{"1,,2 * * * *", "cron minute", `"" is not a number`},
		{"-1 * * * *", "cron minute", `"" is not a number`},
		{"+1 * * * *", "cron minute", `"+1" is not a number`},
		{"1-2-3 * * * *", "cron minute", `"2-3" is not a number`},
		{"1/5 * * * *", "cron minute", `a step needs * or a range before it, got "1/5"`},
		{"0 0 30 2 *", "cron", "no day of any month matches it, so it never fires"},
		{"0 0 31 4,6,9,11 *", "cron", "no day of any month matches it, so it never fires"},
	}
	for _, tc := range cases {
		_, err := ParseCron(tc.expr, nil)
		var se *ScheduleError
		if !errors.As(err, &se) {
			t.Fatalf("ParseCron(%q): got %v, want a *ScheduleError", tc.expr, err)
		}
		if !errors.Is(err, ErrInvalidSchedule) || !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ParseCron(%q): %v does not match ErrInvalidSchedule and ErrInvalidArgument", tc.expr, err)
		}
		if se.Field != tc.field || se.Reason != tc.reason {
			t.Errorf("ParseCron(%q): got field %q reason %q, want %q %q", tc.expr, se.Field, se.Reason, tc.field, tc.reason)
		}
	}
}
