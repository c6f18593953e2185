package lifecycle

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func version(v int64) docket.ScheduleWriteOptions {
	return docket.ScheduleWriteOptions{ExpectedVersion: &v}
}

// expectStale fails unless err is a *StaleVersionError with the versions.
func expectStale(t *testing.T, what string, err error, expected, current int64) {
	t.Helper()
	stale, ok := errors.AsType[*docket.StaleVersionError](err)
	if !ok || !errors.Is(err, docket.ErrStale) || stale.Expected != expected || stale.Current != current {
		t.Fatalf("%s: got %v, want a stale version error expecting %d at %d", what, err, expected, current)
	}
}

// expectSame fails unless the schedule is exactly as before.
func expectSame(t *testing.T, what string, before, after docket.PeriodicSchedule) {
	t.Helper()
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("%s changed the schedule:\nbefore %+v\n after %+v", what, before, after)
	}
}

// TestSchedulePauseResumeRemoveCompareAndSet: every edit is a
// compare-and-set on the version; a refused one changes nothing, a paused
// schedule takes no tick, a resume continues aligned after now.
func TestSchedulePauseResumeRemoveCompareAndSet(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	acme := docket.Tenant("acme")
	added := testkit.ScheduleAdd(t, client, every(acme, "sync", 10*time.Second, ""))
	if added.Version != 1 || added.Paused || !added.NextTickAt.Equal(t0.Add(10*time.Second)) || added.Every != 10*time.Second ||
		added.TimeZone != "UTC" || added.MissedTicks != docket.MissedSkip {
		t.Fatalf("added %+v", added)
	}

	_, err := client.PauseSchedule(ctx, acme, "sync", version(2))
	expectStale(t, "pause at version 2", err, 2, 1)
	expectSame(t, "a stale pause", added, testkit.ScheduleFetch(t, client, acme, "sync"))

	paused, err := client.PauseSchedule(ctx, acme, "sync", version(1))
	if err != nil || !paused.Paused || paused.PausedAt == nil || paused.Version != 2 {
		t.Fatalf("pause: %+v, %v", paused, err)
	}
	if again, err := client.PauseSchedule(ctx, acme, "sync", docket.ScheduleWriteOptions{}); err != nil || !reflect.DeepEqual(again, paused) {
		t.Fatalf("second pause: %+v, %v; want it unchanged", again, err)
	}
	if ticks := take(t, client, pool, t0.Add(time.Hour)); len(ticks) != 0 {
		t.Fatalf("a paused schedule ticked: %v", tickIDs(ticks))
	}

	_, err = client.ResumeSchedule(ctx, acme, "sync", version(1))
	expectStale(t, "resume at version 1", err, 1, 2)
	expectSame(t, "a stale resume", paused, testkit.ScheduleFetch(t, client, acme, "sync"))

	before := time.Now()
	resumed, err := client.ResumeSchedule(ctx, acme, "sync", version(2))
	if err != nil || resumed.Paused || resumed.PausedAt != nil || resumed.Version != 3 {
		t.Fatalf("resume: %+v, %v", resumed, err)
	}
	// The next tick is the schedule's first after the resume, still on the
	// ten-second grid from t0: the paused time inserts nothing.
	if next := resumed.NextTickAt; !next.After(before) || next.Sub(before) > 10*time.Second || next.Sub(t0)%(10*time.Second) != 0 {
		t.Fatalf("next tick after resume %s: want the first ten-second tick from %s after %s", next, t0, before)
	}
	if got := testkit.ScheduleRunIDs(t, pool); len(got) != 0 {
		t.Fatalf("runs %v, want none", got)
	}

	err = client.RemoveSchedule(ctx, acme, "sync", version(2))
	expectStale(t, "remove at version 2", err, 2, 3)
	expectSame(t, "a stale remove", resumed, testkit.ScheduleFetch(t, client, acme, "sync"))
	if err := client.RemoveSchedule(ctx, acme, "sync", version(3)); err != nil {
		t.Fatalf("remove: %v", err)
	}
	for what, err := range map[string]error{
		"fetch":  func() error { _, err := client.FetchSchedule(ctx, acme, "sync"); return err }(),
		"remove": client.RemoveSchedule(ctx, acme, "sync", docket.ScheduleWriteOptions{}),
		"pause": func() error {
			_, err := client.PauseSchedule(ctx, acme, "sync", docket.ScheduleWriteOptions{})
			return err
		}(),
		"resume": func() error {
			_, err := client.ResumeSchedule(ctx, acme, "sync", docket.ScheduleWriteOptions{})
			return err
		}(),
	} {
		if !errors.Is(err, docket.ErrNotFound) {
			t.Errorf("%s of a removed schedule: %v, want ErrNotFound", what, err)
		}
	}
	// Another scope's schedule of the same name is another schedule.
	testkit.ScheduleAdd(t, client, every(docket.Tenant("other"), "sync", time.Minute, ""))
	if _, err := client.FetchSchedule(ctx, acme, "sync"); !errors.Is(err, docket.ErrNotFound) {
		t.Fatalf("fetch across scopes: %v, want ErrNotFound", err)
	}
}

// TestScheduleValidation: every bad definition is a typed error naming the
// field, and writes nothing.
func TestScheduleValidation(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	acme := docket.Tenant("acme")
	valid := func(edit func(*docket.NewSchedule)) docket.NewSchedule {
		s := every(acme, "ok", time.Minute, "")
		edit(&s)
		return s
	}
	cases := []struct {
		name  string
		s     docket.NewSchedule
		field string
	}{
		{"no cadence", valid(func(s *docket.NewSchedule) { s.Every = 0 }), "cron"},
		{"both cadences", valid(func(s *docket.NewSchedule) { s.Cron = "@daily" }), "every"},
		{"sub-second interval", valid(func(s *docket.NewSchedule) { s.Every = 500 * time.Millisecond }), "every"},
		{"fractional interval", valid(func(s *docket.NewSchedule) { s.Every = 1500 * time.Millisecond }), "every"},
		{"negative interval", valid(func(s *docket.NewSchedule) { s.Every = -time.Minute }), "every"},
		{"zone on an interval", valid(func(s *docket.NewSchedule) { s.TimeZone = "Europe/Berlin" }), "time zone"},
		{"bad cron", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "61 * * * *" }), "cron minute"},
		{"@every sub-second", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every 500ms" }), "cron"},
		{"@every fractional", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every 1.5s" }), "cron"},
		{"@every zero", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every 0s" }), "cron"},
		{"@every negative", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every -1m" }), "cron"},
		{"@every without duration", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every" }), "cron"},
		{"@every two durations", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every 1m 2m" }), "cron"},
		{"@every bad duration", valid(func(s *docket.NewSchedule) { s.Every, s.Cron = 0, "@every soon" }), "cron"},
		{"@every and Every", valid(func(s *docket.NewSchedule) { s.Cron = "@every 1m" }), "every"},
		{"zone on @every", valid(func(s *docket.NewSchedule) { s.Every, s.Cron, s.TimeZone = 0, "@every 1m", "Europe/Berlin" }), "time zone"},
		{"unknown zone", valid(func(s *docket.NewSchedule) { s.Every, s.Cron, s.TimeZone = 0, "@daily", "Mars/Olympus" }), "time zone"},
		{"bad policy", valid(func(s *docket.NewSchedule) { s.MissedTicks = "some" }), "missed ticks"},
		{"empty name", valid(func(s *docket.NewSchedule) { s.Name = "" }), "name"},
		{"slash in name", valid(func(s *docket.NewSchedule) { s.Name = "a/b" }), "name"},
		{"control character", valid(func(s *docket.NewSchedule) { s.Name = "a\nb" }), "name"},
		{"long name", valid(func(s *docket.NewSchedule) { s.Name = strings.Repeat("n", docket.MaxScheduleNameBytes+1) }), "name"},
		{"no room for run ids", valid(func(s *docket.NewSchedule) {
			s.Scope, s.Name = docket.Tenant(strings.Repeat("t", 150)), strings.Repeat("n", 20)
		}), "name"},
		{"unstorable start", valid(func(s *docket.NewSchedule) { s.Start = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC) }), "start"},
	}
	for _, tc := range cases {
		_, err := client.AddSchedule(ctx, tc.s)
		se, ok := errors.AsType[*docket.ScheduleError](err)
		if !ok || !errors.Is(err, docket.ErrInvalidSchedule) || !errors.Is(err, docket.ErrInvalidArgument) || se.Field != tc.field {
			t.Errorf("%s: got %v, want a *ScheduleError on %q", tc.name, err, tc.field)
		}
	}
	for name, tc := range map[string]struct {
		s    docket.NewSchedule
		want error
	}{
		"bad state":          {valid(func(s *docket.NewSchedule) { s.State = json.RawMessage(`{`) }), docket.ErrInvalidArgument},
		"empty graph":        {valid(func(s *docket.NewSchedule) { s.GraphID = "" }), docket.ErrInvalidArgument},
		"tenantless refused": {valid(func(s *docket.NewSchedule) { s.Scope = docket.Tenantless }), docket.ErrTenantRequired},
	} {
		if _, err := client.AddSchedule(ctx, tc.s); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_schedules`); n != 0 {
		t.Fatalf("%d schedules after refused adds, want 0", n)
	}
	first := testkit.ScheduleAdd(t, client, valid(func(*docket.NewSchedule) {}))
	if _, err := client.AddSchedule(ctx, valid(func(s *docket.NewSchedule) { s.Every = time.Hour })); !errors.Is(err, docket.ErrDuplicateSchedule) {
		t.Fatalf("duplicate name: %v, want ErrDuplicateSchedule", err)
	}
	expectSame(t, "a duplicate add", first, testkit.ScheduleFetch(t, client, acme, "ok"))
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_schedules`); n != 1 {
		t.Fatalf("%d schedules, want 1", n)
	}
	// The longest name that leaves room for the tick run ids is accepted.
	longest := valid(func(s *docket.NewSchedule) {
		s.Scope, s.Name = docket.Tenant(strings.Repeat("t", 100)), strings.Repeat("n", docket.MaxIdentifierBytes-100-31)
	})
	if _, err := client.AddSchedule(ctx, longest); err != nil {
		t.Fatalf("longest name: %v", err)
	}
	if id := docket.ScheduleRunID(longest.Scope, longest.Name, t0); len(id) != docket.MaxIdentifierBytes {
		t.Fatalf("longest run id is %d bytes, want %d", len(id), docket.MaxIdentifierBytes)
	}
}

// A Cron of "@every DURATION" is an interval schedule: stored and listed as
// Every would be, its first tick one interval after the start; under a
// second it is refused with the typed error, naming the Cron text.
func TestScheduleEveryDescriptorIsAnInterval(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	acme := docket.Tenant("acme")
	viaCron := every(acme, "via-cron", 0, "")
	viaCron.Cron = " @every 1h30m "
	got := testkit.ScheduleAdd(t, client, viaCron)
	want := testkit.ScheduleAdd(t, client, every(acme, "via-every", 90*time.Minute, ""))
	if got.Cron != "" || got.Every != 90*time.Minute || got.TimeZone != "UTC" || !got.NextTickAt.Equal(t0.Add(90*time.Minute)) ||
		got.Cron != want.Cron || got.Every != want.Every || !got.NextTickAt.Equal(want.NextTickAt) {
		t.Fatalf("@every 1h30m stored as %+v, want the interval schedule %+v", got, want)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_schedules where cron_expr is null and interval_seconds = 5400`); n != 2 {
		t.Fatalf("%d interval rows of 5400 s, want 2", n)
	}
	sub := every(acme, "fast", 0, "")
	sub.Cron = "@every 500ms"
	_, err := client.AddSchedule(ctx, sub)
	if want := `docket: invalid schedule: cron "@every 500ms": must be a whole number of seconds, at least one`; err == nil || err.Error() != want ||
		!errors.Is(err, docket.ErrInvalidSchedule) {
		t.Fatalf("@every 500ms: %v, want %s", err, want)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_schedules`); n != 2 {
		t.Fatalf("%d schedules after a refused add, want 2", n)
	}
}

// TestScheduleListPages pages through the schedules of every scope and of
// one scope in (scope, name) order.
func TestScheduleListPages(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	ctx := testkit.Context(t)
	for _, s := range []struct {
		scope docket.Scope
		name  string
	}{{docket.Tenant("b"), "x"}, {docket.Tenantless, "z"}, {docket.Tenant("a"), "y"}, {docket.Tenant("a"), "w"}} {
		testkit.ScheduleAdd(t, client, every(s.scope, s.name, time.Minute, ""))
	}
	var got []string
	var after *docket.ScheduleCursor
	pages := 0
	for {
		page, err := client.ListSchedules(ctx, docket.ListSchedulesRequest{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range page.Schedules {
			got = append(got, s.Scope.String()+"/"+s.Name)
		}
		if page.Next == nil {
			break
		}
		after = page.Next
	}
	if want := []string{"tenantless/z", "tenant:a/w", "tenant:a/y", "tenant:b/x"}; !slices.Equal(got, want) || pages != 2 {
		t.Fatalf("listing %v in %d pages, want %v in 2", got, pages, want)
	}
	a := docket.Tenant("a")
	page, err := client.ListSchedules(ctx, docket.ListSchedulesRequest{Scope: &a, Limit: 1})
	if err != nil || len(page.Schedules) != 1 || page.Schedules[0].Name != "w" || page.Next == nil || *page.Next != (docket.ScheduleCursor{Scope: a, Name: "w"}) {
		t.Fatalf("first page of a: %+v, %v", page, err)
	}
	page, err = client.ListSchedules(ctx, docket.ListSchedulesRequest{Scope: &a, After: page.Next, Limit: 1})
	if err != nil || len(page.Schedules) != 1 || page.Schedules[0].Name != "y" || page.Next != nil {
		t.Fatalf("second page of a: %+v, %v", page, err)
	}
	if _, err := client.ListSchedules(ctx, docket.ListSchedulesRequest{Limit: docket.MaxListLimit + 1}); !errors.Is(err, docket.ErrInvalidArgument) {
		t.Fatalf("oversized page: %v, want ErrInvalidArgument", err)
	}
}
