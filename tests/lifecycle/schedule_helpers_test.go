package lifecycle

import (
	"encoding/json"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// t0 is the start of every schedule test: a whole minute, so interval and
// cron ticks line up with readable times.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// clock is a docket.ScheduleClock that only moves when the test sets it;
// waiters whose time has come are released by the set itself.
type clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func newSCClock(now time.Time) *clock { return &clock{now: now} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) At(t time.Time) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if !t.After(c.now) {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: t, ch: ch})
	return ch
}

// set moves the clock to now and releases every waiter due by then.
func (c *clock) set(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = now
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- now
	}
	c.waiters = kept
}

// every is an interval schedule of scope starting at t0.
func every(scope docket.Scope, name string, every time.Duration, missed docket.MissedTicks) docket.NewSchedule {
	return docket.NewSchedule{
		Scope: scope, Name: name, GraphID: "report", GraphHash: "v1",
		State: json.RawMessage(`{"kind": "report"}`), Every: every, MissedTicks: missed, Start: t0,
	}
}

// take takes the ticks due at now in a committed transaction of its own.
func take(t *testing.T, client *docket.Client, pool *pgxpool.Pool, now time.Time) []docket.ScheduleTick {
	t.Helper()
	ctx := testkit.Context(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	ticks, err := client.TakeDueTicksTx(ctx, tx, now, 0)
	if err != nil {
		t.Fatalf("take ticks at %s: %v", now, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return ticks
}

// tickIDs are the run ids of ticks, in order.
func tickIDs(ticks []docket.ScheduleTick) []string {
	ids := make([]string, len(ticks))
	for i, tk := range ticks {
		ids[i] = tk.RunID
	}
	return ids
}

// intervalIDs are the run ids of ticks k = from..to of an interval schedule
// of scope started at t0, sorted as testkit.ScheduleRunIDs sorts.
func intervalIDs(scope docket.Scope, name string, every time.Duration, from, to int) []string {
	var ids []string
	for k := from; k <= to; k++ {
		ids = append(ids, docket.ScheduleRunID(scope, name, t0.Add(time.Duration(k)*every)))
	}
	sort.Strings(ids)
	return ids
}
