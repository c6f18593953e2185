package lifecycle

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestScheduleRollbackLeavesTickToNextTaker: a taker whose transaction rolls
// back (a crash before commit) leaves its tick due; while it holds the row
// another taker skips it, and the next taker after the rollback inserts the
// tick's run exactly once.
func TestScheduleRollbackLeavesTickToNextTaker(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	acme := docket.Tenant("acme")
	testkit.ScheduleAdd(t, client, every(acme, "nightly", time.Second, docket.MissedSkip))
	ctx := testkit.Context(t)
	now := t0.Add(time.Second)
	want := "schedule:acme/nightly@2026-12-01T10:00:01Z"

	crashed, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ticks, err := client.TakeDueTicksTx(ctx, crashed, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := tickIDs(ticks); !slices.Equal(got, []string{want}) || ticks[0].Err != nil {
		t.Fatalf("first taker: ticks %v (err %v), want [%s]", got, ticks[0].Err, want)
	}
	// The row is held: a concurrent taker finds nothing due.
	if ticks := take(t, client, pool, now); len(ticks) != 0 {
		t.Fatalf("concurrent taker took %v, want nothing", tickIDs(ticks))
	}
	if err := crashed.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := testkit.ScheduleRunIDs(t, pool); len(got) != 0 {
		t.Fatalf("after the rollback: runs %v, want none", got)
	}
	if s := testkit.ScheduleFetch(t, client, acme, "nightly"); !s.NextTickAt.Equal(now) || s.LastTickAt != nil {
		t.Fatalf("after the rollback: next %s last %v, want next %s and no last tick", s.NextTickAt, s.LastTickAt, now)
	}

	ticks = take(t, client, pool, now)
	if got := tickIDs(ticks); !slices.Equal(got, []string{want}) || ticks[0].Err != nil {
		t.Fatalf("next taker: ticks %v, want [%s]", got, want)
	}
	if again := take(t, client, pool, now); len(again) != 0 {
		t.Fatalf("taker after the commit took %v, want nothing", tickIDs(again))
	}
	if got := testkit.ScheduleRunIDs(t, pool); !slices.Equal(got, []string{want}) {
		t.Fatalf("runs %v, want [%s]", got, want)
	}
	s := testkit.ScheduleFetch(t, client, acme, "nightly")
	if !s.NextTickAt.Equal(now.Add(time.Second)) || s.LastTickAt == nil || !s.LastTickAt.Equal(now) || s.Version != 1 {
		t.Fatalf("after the tick: next %s last %v version %d, want next %s, last %s, version 1",
			s.NextTickAt, s.LastTickAt, s.Version, now.Add(time.Second), now)
	}
}

// TestScheduleMissedTickPolicies pins the runs a take inserts after an
// outage: skip inserts the most recent due tick, all every due tick up to
// MaxMissedTicks; both continue from the first tick after the taker's clock.
func TestScheduleMissedTickPolicies(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	scope := docket.Tenantless
	testkit.ScheduleAdd(t, client, every(scope, "skip", time.Minute, ""))
	testkit.ScheduleAdd(t, client, every(scope, "all", time.Minute, docket.MissedAll))
	testkit.ScheduleAdd(t, client, every(scope, "capped", time.Second, docket.MissedAll))
	cron := every(scope, "cron", 0, docket.MissedSkip)
	cron.Every, cron.Cron, cron.TimeZone = 0, "*/15 * * * *", "Europe/Berlin"
	testkit.ScheduleAdd(t, client, cron)

	now := t0.Add(5*time.Minute + 30*time.Second)
	ticks := take(t, client, pool, now)
	var want []string
	want = append(want, intervalIDs(scope, "skip", time.Minute, 5, 5)...)
	want = append(want, intervalIDs(scope, "all", time.Minute, 1, 5)...)
	want = append(want, intervalIDs(scope, "capped", time.Second, 1, docket.MaxMissedTicks)...)
	// The cron schedule's first tick after t0 is 10:15 UTC, not yet due.
	slices.Sort(want)
	got := testkit.ScheduleRunIDs(t, pool)
	if !slices.Equal(got, want) {
		t.Fatalf("runs after the outage:\n got %v\nwant %v", got, want)
	}
	if len(ticks) != len(want) {
		t.Fatalf("take reported %d ticks, want %d", len(ticks), len(want))
	}
	for name, next := range map[string]time.Time{
		"skip":   t0.Add(6 * time.Minute),
		"all":    t0.Add(6 * time.Minute),
		"capped": t0.Add(5*time.Minute + 31*time.Second),
		"cron":   t0.Add(15 * time.Minute),
	} {
		if s := testkit.ScheduleFetch(t, client, scope, name); !s.NextTickAt.Equal(next) {
			t.Errorf("%s: next tick %s, want %s", name, s.NextTickAt, next)
		}
	}
	if s := testkit.ScheduleFetch(t, client, scope, "capped"); s.LastTickAt == nil || !s.LastTickAt.Equal(t0.Add(100*time.Second)) {
		t.Errorf("capped: last tick %v, want the 100th, %s", s.LastTickAt, t0.Add(100*time.Second))
	}

	// Two days later the cron schedule's skip policy inserts only its most
	// recent quarter hour.
	later := time.Date(2026, 12, 3, 10, 20, 0, 0, time.UTC)
	before := len(testkit.ScheduleRunIDs(t, pool))
	take(t, client, pool, later)
	if !slices.Contains(testkit.ScheduleRunIDs(t, pool), "schedule:cron@2026-12-03T10:15:00Z") {
		t.Fatalf("cron skip: no run for 10:15 on 12-03 in %v", testkit.ScheduleRunIDs(t, pool))
	}
	// skip, all (capped at 100 of 2880 due minutes), capped (100) and cron (1).
	if got := len(testkit.ScheduleRunIDs(t, pool)) - before; got != 1+100+100+1 {
		t.Fatalf("second take inserted %d runs, want %d", got, 1+100+100+1)
	}
	if s := testkit.ScheduleFetch(t, client, scope, "cron"); !s.NextTickAt.Equal(time.Date(2026, 12, 3, 10, 30, 0, 0, time.UTC)) {
		t.Fatalf("cron: next tick %s, want 10:30 UTC", s.NextTickAt)
	}
}

// TestScheduleTickRunQueuesUnderCap: a tick's run goes through admission
// like any run, so a tenant at its cap gets it queued, not leased.
func TestScheduleTickRunQueuesUnderCap(t *testing.T) {
	s := testkit.NewRunStore(t, 1)
	s.Insert("acme", "busy")
	s.Claim("acme", "busy")
	acme := docket.Tenant("acme")
	testkit.ScheduleAdd(t, s.Client, every(acme, "hourly", time.Hour, ""))
	ticks := take(t, s.Client, s.Pool, t0.Add(time.Hour))
	want := "schedule:acme/hourly@2026-12-01T11:00:00Z"
	if got := tickIDs(ticks); !slices.Equal(got, []string{want}) {
		t.Fatalf("ticks %v, want [%s]", got, want)
	}
	s.ExpectAdmission("acme", want, docket.AdmissionQueued)
	res := s.ClaimDue(s.DbNow(), time.Hour, 100)
	if len(res.Leases) != 0 {
		t.Fatalf("claim at the cap leased %+v, want nothing", res.Leases)
	}
	run, err := s.Client.FetchRun(testkit.Context(t), acme, want)
	if err != nil {
		t.Fatal(err)
	}
	if run.GraphID != "report" || run.GraphHash != "v1" || string(run.State) != `{"kind": "report"}` || run.Status != docket.StatusRunning {
		t.Fatalf("tick run %+v, want graph report/v1, the schedule's state, running", run)
	}
}

// TestScheduleExistingRunIDTakesTheTicksPlace: a run that already holds a
// tick's id (a schedule removed and added again over the same ticks) makes
// the tick insert nothing, reported as ErrDuplicateRun, and the schedule
// still advances.
func TestScheduleExistingRunIDTakesTheTicksPlace(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	testkit.ScheduleAdd(t, client, every(docket.Tenantless, "daily", 24*time.Hour, ""))
	id := docket.ScheduleRunID(docket.Tenantless, "daily", t0.Add(24*time.Hour))
	if _, err := client.InsertRun(testkit.Context(t), docket.NewRun{
		RunID: id, GraphID: "manual", GraphHash: "v0", State: json.RawMessage(`{}`),
	}); err != nil {
		t.Fatal(err)
	}
	ticks := take(t, client, pool, t0.Add(24*time.Hour))
	if len(ticks) != 1 || ticks[0].RunID != id || !errors.Is(ticks[0].Err, docket.ErrDuplicateRun) {
		t.Fatalf("ticks %+v, want one for %s with ErrDuplicateRun", ticks, id)
	}
	run, err := client.FetchRun(testkit.Context(t), docket.Tenantless, id)
	if err != nil || run.GraphID != "manual" {
		t.Fatalf("run %s: %+v, %v; want the manual run untouched", id, run, err)
	}
	if s := testkit.ScheduleFetch(t, client, docket.Tenantless, "daily"); !s.NextTickAt.Equal(t0.Add(48 * time.Hour)) {
		t.Fatalf("next tick %s, want %s", s.NextTickAt, t0.Add(48*time.Hour))
	}
}

// TestScheduleTakeReportsRowsItCannotServe: a row with a cadence this binary
// cannot read (written with plain SQL) is reported and left as it is; a
// tenantless schedule taken by a client under TenantRequired advances
// without a run; the other due schedules of the batch still tick.
func TestScheduleTakeReportsRowsItCannotServe(t *testing.T) {
	pool := testkit.NewPool(t)
	none := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	testkit.ScheduleAdd(t, none, every(docket.Tenantless, "tenantless", time.Minute, ""))
	testkit.ScheduleAdd(t, none, every(docket.Tenant("acme"), "fine", time.Minute, ""))
	testkit.ExecSQL(t, pool, `insert into docket_schedules (tenant_id, name, graph_id, graph_hash, state, cron_expr, next_tick_at)
		values ('acme', 'broken', 'g', 'h', '{}', '61 * * * *', $1)`, t0)
	required := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	now := t0.Add(time.Minute)
	ticks := take(t, required, pool, now)
	got := map[string]docket.ScheduleTick{}
	for _, tk := range ticks {
		got[tk.Schedule] = tk
	}
	if len(ticks) != 3 || !errors.Is(got["broken"].Err, docket.ErrInvalidSchedule) || got["broken"].RunID != "" ||
		!errors.Is(got["tenantless"].Err, docket.ErrTenantRequired) || got["tenantless"].RunID != "schedule:tenantless@2026-12-01T10:01:00Z" ||
		got["fine"].Err != nil || got["fine"].RunID != "schedule:acme/fine@2026-12-01T10:01:00Z" {
		t.Fatalf("ticks %+v", ticks)
	}
	if ids := testkit.ScheduleRunIDs(t, pool); !slices.Equal(ids, []string{"schedule:acme/fine@2026-12-01T10:01:00Z"}) {
		t.Fatalf("runs %v, want only the fine one", ids)
	}
	if s := testkit.ScheduleFetch(t, none, docket.Tenant("acme"), "broken"); !s.NextTickAt.Equal(t0) || s.LastTickAt != nil {
		t.Fatalf("broken schedule changed: %+v", s)
	}
	if s := testkit.ScheduleFetch(t, none, docket.Tenantless, "tenantless"); !s.NextTickAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("tenantless schedule did not advance: %+v", s)
	}
}
