package lifecycle

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// hasTicks reports whether every run id of ids has a tick event.
func hasTicks(events []docket.WorkerEvent, ids []string) bool {
	seen := map[string]bool{}
	for _, e := range testkit.WorkerEventsOf(events, docket.EventScheduleTick) {
		seen[e.RunID] = true
	}
	for _, id := range ids {
		if !seen[id] {
			return false
		}
	}
	return true
}

func workerConfig(events *testkit.WorkerEvents) docket.WorkerConfig {
	return docket.WorkerConfig{
		Concurrency: 2,
		Handler:     func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) },
		OnEvent:     events.Hook,
		Schedules:   true,
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
	clock := newSCClock(t0)
	events := testkit.NewWorkerEvents()
	type started struct {
		w    *docket.Worker
		done <-chan error
	}
	var workers []started
	for range 3 {
		w, done := testkit.StartTestWorker(t, client, workerConfig(events), docket.WorkerTestConfig{ScheduleClock: clock})
		workers = append(workers, started{w, done})
	}
	testkit.ScheduleAdd(t, client, every(acme, "pulse", time.Second, docket.MissedAll))

	const stepped = 30
	for k := 1; k <= stepped; k++ {
		clock.set(t0.Add(time.Duration(k) * time.Second))
		ids := intervalIDs(acme, "pulse", time.Second, k, k)
		events.WaitFor(t, fmt.Sprintf("tick %d", k), func(ev []docket.WorkerEvent) bool { return hasTicks(ev, ids) })
	}
	// A jump of ten seconds: ten missed ticks, all inserted by one take.
	const total = stepped + 10
	clock.set(t0.Add(total * time.Second))
	want := intervalIDs(acme, "pulse", time.Second, 1, total)
	events.WaitFor(t, "the jump's ticks", func(ev []docket.WorkerEvent) bool { return hasTicks(ev, want) })
	for _, w := range workers {
		testkit.StopWorker(t, w.w, w.done)
	}

	var tickIDs []string
	for _, e := range testkit.WorkerEventsOf(events.All(), docket.EventScheduleTick) {
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
	if !s.NextTickAt.Equal(t0.Add((total+1)*time.Second)) || !s.LastTickAt.Equal(t0.Add(total*time.Second)) {
		t.Fatalf("next %s last %v, want next %s last %s", s.NextTickAt, s.LastTickAt,
			t0.Add((total+1)*time.Second), t0.Add(total*time.Second))
	}
}

// TestScheduleWorkerWakesOnAdd: a schedule added with a tick already due is
// taken at once on AddSchedule's notification, though the Worker's clock
// never moves and its poll interval is an hour.
func TestScheduleWorkerWakesOnAdd(t *testing.T) {
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone})
	clock := newSCClock(t0)
	events := testkit.NewWorkerEvents()
	cfg := workerConfig(events)
	cfg.PollInterval = time.Hour
	testkit.StartTestWorker(t, client, cfg, docket.WorkerTestConfig{ScheduleClock: clock})
	events.WaitFor(t, "the first schedule pass", func(ev []docket.WorkerEvent) bool {
		return slices.ContainsFunc(ev, func(e docket.WorkerEvent) bool { return e.Kind == docket.EventSchedulePass })
	})
	due := every(docket.Tenantless, "due", time.Minute, "")
	due.Start = t0.Add(-time.Minute)
	testkit.ScheduleAdd(t, client, due)
	want := "schedule:due@2026-12-01T10:00:00Z"
	events.WaitFor(t, "the due tick", func(ev []docket.WorkerEvent) bool { return hasTicks(ev, []string{want}) })
	events.WaitWritten(t, "complete", want)
	run, err := client.FetchRun(testkit.Context(t), docket.Tenantless, want)
	if err != nil || run.Status != docket.StatusDone {
		t.Fatalf("tick run: %+v, %v; want done", run, err)
	}
}
