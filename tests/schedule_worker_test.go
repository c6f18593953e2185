package tests

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/testkit"
)

// scTickEvents returns the EventScheduleTick events of events.
func scTickEvents(events []docket.WorkerEvent) []docket.WorkerEvent {
	var ticks []docket.WorkerEvent
	for _, e := range events {
		if e.Kind == docket.EventScheduleTick {
			ticks = append(ticks, e)
		}
	}
	return ticks
}

// scHasTicks reports whether every run id of ids has a tick event.
func scHasTicks(events []docket.WorkerEvent, ids []string) bool {
	seen := map[string]bool{}
	for _, e := range scTickEvents(events) {
		seen[e.RunID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			return false
		}
	}
	return true
}

func scWorkerConfig(events *testkit.WorkerEvents, clock *scClock) docket.WorkerConfig {
	return docket.WorkerConfig{
		Concurrency:   2,
		Handler:       func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) },
		OnEvent:       events.Hook,
		Schedules:     true,
		ScheduleClock: clock,
	}
}

// TestScheduleWorkersRaceExactlyOnce: three Workers on one clock race for
// every tick of a one-second schedule; each tick is taken by exactly one of
// them and inserts exactly one run, one tick per second stepped and every
// missed tick of a jump (MissedAll).
func TestScheduleWorkersRaceExactlyOnce(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(100))
	acme := docket.Tenant("acme")
	clock := newSCClock(scT0)
	events := testkit.NewWorkerEvents()
	type started struct {
		w    *docket.Worker
		done <-chan error
	}
	var workers []started
	for range 3 {
		w, done := testkit.StartWorker(t, client, scWorkerConfig(events, clock))
		workers = append(workers, started{w, done})
	}
	testkit.ScheduleAdd(t, client, scEvery(acme, "pulse", time.Second, docket.MissedAll))

	const stepped = 30
	for k := 1; k <= stepped; k++ {
		clock.set(scT0.Add(time.Duration(k) * time.Second))
		ids := scIntervalIDs(acme, "pulse", time.Second, k, k)
		events.WaitFor(t, fmt.Sprintf("tick %d", k), func(ev []docket.WorkerEvent) bool { return scHasTicks(ev, ids) })
	}
	// A jump of ten seconds: ten missed ticks, all inserted by one take.
	const total = stepped + 10
	clock.set(scT0.Add(total * time.Second))
	want := scIntervalIDs(acme, "pulse", time.Second, 1, total)
	events.WaitFor(t, "the jump's ticks", func(ev []docket.WorkerEvent) bool { return scHasTicks(ev, want) })
	for _, w := range workers {
		testkit.StopWorker(t, w.w, w.done)
	}

	var tickIDs []string
	for _, e := range scTickEvents(events.All()) {
		if e.Err != nil || e.Scope != acme || e.Schedule != "pulse" {
			t.Fatalf("tick event %+v, want a clean tick of acme/pulse", e)
		}
		tickIDs = append(tickIDs, e.RunID)
	}
	slices.Sort(tickIDs)
	if !slices.Equal(tickIDs, want) {
		t.Fatalf("tick events:\n got %v\nwant %v", tickIDs, want)
	}
	for _, e := range events.All() {
		if e.Kind == docket.EventSchedulePass && e.Err != nil {
			t.Fatalf("a schedule pass failed: %v", e.Err)
		}
	}
	if got := testkit.ScheduleRunIDs(t, pool); !slices.Equal(got, want) {
		t.Fatalf("runs:\n got %v\nwant %v", got, want)
	}
	s := testkit.ScheduleFetch(t, client, acme, "pulse")
	if !s.NextTickAt.Equal(scT0.Add((total+1)*time.Second)) || !s.LastTickAt.Equal(scT0.Add(total*time.Second)) {
		t.Fatalf("next %s last %v, want next %s last %s", s.NextTickAt, s.LastTickAt,
			scT0.Add((total+1)*time.Second), scT0.Add(total*time.Second))
	}
}

// TestScheduleWorkerWakesOnAdd: a schedule added with a tick already due is
// taken at once on AddSchedule's notification, though the Worker's clock
// never moves and its poll interval is an hour.
func TestScheduleWorkerWakesOnAdd(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	clock := newSCClock(scT0)
	events := testkit.NewWorkerEvents()
	cfg := scWorkerConfig(events, clock)
	cfg.PollInterval = time.Hour
	testkit.StartWorker(t, client, cfg)
	events.WaitFor(t, "the first schedule pass", func(ev []docket.WorkerEvent) bool {
		return slices.ContainsFunc(ev, func(e docket.WorkerEvent) bool { return e.Kind == docket.EventSchedulePass })
	})
	due := scEvery(docket.Tenantless, "due", time.Minute, "")
	due.Start = scT0.Add(-time.Minute)
	testkit.ScheduleAdd(t, client, due)
	want := "schedule:due@2026-12-01T10:00:00Z"
	events.WaitFor(t, "the due tick", func(ev []docket.WorkerEvent) bool { return scHasTicks(ev, []string{want}) })
	events.WaitWritten(t, "complete", want)
	run, err := client.FetchRun(testkit.Context(t), docket.Tenantless, want)
	if err != nil || run.Status != docket.StatusDone {
		t.Fatalf("tick run: %+v, %v; want done", run, err)
	}
}
