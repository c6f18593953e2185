package maintenance

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// deadline bounds every wait, so a broken service fails instead of hanging;
// no test waits for it to pass.
const deadline = 10 * time.Second

// t0 is the fake clocks' time.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

// receive returns the next value of ch, failing the test after deadline.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// none fails the test if ch holds a value right now.
func none[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected %s: %v", what, v)
	default:
	}
}

// fakeClock is a Clock and a ScheduleClock whose time moves only by set and
// whose ticker and At channels the test fires itself.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
	// tickers receives every ticker made, ats every At's deadline and
	// channel.
	tickers chan *fakeTicker
	ats     chan fakeAt
}

type fakeTicker struct {
	every time.Duration
	c     chan time.Time
	// stopped is closed by Stop.
	stopped chan struct{}
}

type fakeAt struct {
	t time.Time
	c chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: t0, tickers: make(chan *fakeTicker, 4), ats: make(chan fakeAt, 16)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *fakeClock) NewTicker(d time.Duration) Ticker {
	t := &fakeTicker{every: d, c: make(chan time.Time), stopped: make(chan struct{})}
	c.tickers <- t
	return t
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }

func (t *fakeTicker) Stop() { close(t.stopped) }

func (c *fakeClock) At(t time.Time) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.ats <- fakeAt{t: t, c: ch}
	return ch
}

// record is one log record, its attributes as text.
type record struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// logRecorder is a slog.Handler that keeps every record, debug included.
type logRecorder struct {
	mu      sync.Mutex
	records []record
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := record{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, rec)
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

// lines returns the records as "LEVEL msg k=v ..." lines, attributes in
// the order given by keys.
func (l *logRecorder) lines(keys ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		line := r.level.String() + " " + r.msg
		for _, k := range keys {
			if v, ok := r.attrs[k]; ok {
				line += fmt.Sprintf(" %s=%s", k, v)
			}
		}
		out = append(out, line)
	}
	return out
}

// slogOf returns a logger writing to l.
func slogOf(l *logRecorder) *slog.Logger { return slog.New(l) }
