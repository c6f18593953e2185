package docket

import (
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
