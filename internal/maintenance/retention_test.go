package maintenance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// deleteCall is one call of DeleteFinished.
type deleteCall struct {
	status string
	cutoff time.Time
	batch  int
}

// pass is one OnPass report.
type pass struct {
	n   int64
	err error
}

// fakeDeleter answers DeleteFinished with the count of its status, or the
// error fail returns for it, and records every call.
type fakeDeleter struct {
	mu     sync.Mutex
	calls  []deleteCall
	counts map[string]int64
	fail   func(status string) error
}

func (d *fakeDeleter) DeleteFinished(_ context.Context, status string, cutoff time.Time, batch int) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, deleteCall{status, cutoff, batch})
	if d.fail != nil {
		if err := d.fail(status); err != nil {
			return d.counts[status], err
		}
	}
	return d.counts[status], nil
}

// took returns the calls so far and forgets them.
func (d *fakeDeleter) took() []deleteCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	calls := d.calls
	d.calls = nil
	return calls
}

// keepDefaults is the Worker's default Keep list.
var keepDefaults = []Keep{{"done", 24 * time.Hour}, {"cancelled", 24 * time.Hour}, {"failed", 7 * 24 * time.Hour}}

// cleaner returns a cleaner of d on clock whose passes arrive on the
// returned channel and whose logs go to log.
func cleaner(d *fakeDeleter, clock *fakeClock, log *logRecorder) (*RetentionCleaner, <-chan pass) {
	passes := make(chan pass, 8)
	return NewRetentionCleaner(RetentionConfig{
		Every:          5 * time.Minute,
		Keep:           keepDefaults,
		BatchSize:      7,
		DeleteFinished: d.DeleteFinished,
		Clock:          clock,
		Logger:         slogOf(log),
		OnPass:         func(n int64, err error) { passes <- pass{n, err} },
	}), passes
}

// wantCalls is one pass's calls of keepDefaults from start.
func wantCalls(start time.Time) []deleteCall {
	return []deleteCall{
		{"done", start.Add(-24 * time.Hour), 7},
		{"cancelled", start.Add(-24 * time.Hour), 7},
		{"failed", start.Add(-7 * 24 * time.Hour), 7},
	}
}

// The cleaner runs a pass as it starts, before any tick, then one per tick
// of a ticker of Every: each pass deletes every status in Keep's order with
// its cutoff measured from the pass's start and the configured batch size,
// reports the sum once, and logs it at debug level. Stop ends the ticker.
func TestRetentionFirstPassAtStartThenOnePerTick(t *testing.T) {
	d := &fakeDeleter{counts: map[string]int64{"done": 3, "cancelled": 1}}
	clock := newFakeClock()
	log := &logRecorder{}
	c, passes := cleaner(d, clock, log)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ticker := receive(t, clock.tickers, "ticker")
	if ticker.every != 5*time.Minute {
		t.Fatalf("ticker every %s, want 5m", ticker.every)
	}
	if p := receive(t, passes, "first pass"); p != (pass{4, nil}) {
		t.Fatalf("first pass %+v, want 4 deleted", p)
	}
	if got := d.took(); !slices.Equal(got, wantCalls(t0)) {
		t.Fatalf("first pass calls %+v, want %+v", got, wantCalls(t0))
	}

	later := t0.Add(5 * time.Minute)
	clock.set(later)
	ticker.c <- later
	if p := receive(t, passes, "second pass"); p != (pass{4, nil}) {
		t.Fatalf("second pass %+v, want 4 deleted", p)
	}
	if got := d.took(); !slices.Equal(got, wantCalls(later)) {
		t.Fatalf("second pass calls %+v, want %+v", got, wantCalls(later))
	}
	c.Stop()
	receive(t, ticker.stopped, "ticker stop")
	none(t, passes, "pass after stop")
	want := []string{"DEBUG docket worker retention pass deleted=4", "DEBUG docket worker retention pass deleted=4"}
	if got := log.lines("deleted", "error"); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// A failing status ends its pass there: the runs deleted so far, the
// failed call's included, are reported with the error and logged at warn
// level, and the next tick's pass takes every status again.
func TestRetentionFailureEndsThePassAndTheNextTries(t *testing.T) {
	boom := errors.New("boom")
	failed := false
	d := &fakeDeleter{counts: map[string]int64{"done": 3, "cancelled": 2, "failed": 1}, fail: func(status string) error {
		if status == "cancelled" && !failed {
			failed = true
			return boom
		}
		return nil
	}}
	clock := newFakeClock()
	log := &logRecorder{}
	c, passes := cleaner(d, clock, log)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	ticker := receive(t, clock.tickers, "ticker")
	if p := receive(t, passes, "failed pass"); p.n != 5 || !errors.Is(p.err, boom) {
		t.Fatalf("failed pass %+v, want 5 deleted and boom", p)
	}
	if got, want := d.took(), wantCalls(t0)[:2]; !slices.Equal(got, want) {
		t.Fatalf("failed pass calls %+v, want %+v", got, want)
	}
	ticker.c <- t0
	if p := receive(t, passes, "next pass"); p != (pass{6, nil}) {
		t.Fatalf("next pass %+v, want 6 deleted", p)
	}
	if got := d.took(); !slices.Equal(got, wantCalls(t0)) {
		t.Fatalf("next pass calls %+v, want %+v", got, wantCalls(t0))
	}
	want := []string{
		"WARN docket worker retention pass failed; trying again at the next pass deleted=5 error=boom",
		"DEBUG docket worker retention pass deleted=6",
	}
	if got := log.lines("deleted", "error"); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// A pass that Stop cuts short reports and logs nothing, and Stop returns
// once it ended.
func TestRetentionPassCutShortByStopReportsNothing(t *testing.T) {
	entered := make(chan struct{})
	calls := 0
	passes := make(chan pass, 1)
	log := &logRecorder{}
	clock := newFakeClock()
	c := NewRetentionCleaner(RetentionConfig{
		Every: time.Minute,
		Keep:  keepDefaults,
		DeleteFinished: func(ctx context.Context, _ string, _ time.Time, _ int) (int64, error) {
			calls++
			close(entered)
			<-ctx.Done()
			return 2, ctx.Err()
		},
		Clock:  clock,
		Logger: slogOf(log),
		OnPass: func(n int64, err error) { passes <- pass{n, err} },
	})
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	receive(t, entered, "delete call")
	c.Stop()
	none(t, passes, "pass report")
	if calls != 1 {
		t.Fatalf("%d delete calls, want 1", calls)
	}
	if got := log.lines(); len(got) != 0 {
		t.Fatalf("log %q, want nothing", got)
	}
}
