package maintenance

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// batch is one answer of TakeBatch, next one of NextTick.
type batch struct {
	ticks []string
	full  bool
	err   error
}

type next struct {
	at  time.Time
	err error
}

// fakeSchedules serves TakeBatch and NextTick from the answers the test
// queues, recording every call, and records the taker's reports. A call
// with no answer queued waits for one or for the end of its context.
type fakeSchedules struct {
	batchAt  chan time.Time
	batches  chan batch
	nextAsks chan struct{}
	nexts    chan next
	ticks    chan string
	passes   chan pass
	backoffs chan int
	waits    chan time.Duration
}

func newFakeSchedules() *fakeSchedules {
	return &fakeSchedules{
		batchAt: make(chan time.Time, 16), batches: make(chan batch, 16),
		nextAsks: make(chan struct{}, 16), nexts: make(chan next, 16),
		ticks: make(chan string, 16), passes: make(chan pass, 16),
		backoffs: make(chan int, 16), waits: make(chan time.Duration, 16),
	}
}

func (f *fakeSchedules) takeBatch(ctx context.Context, now time.Time) ([]string, bool, error) {
	f.batchAt <- now
	select {
	case b := <-f.batches:
		return b.ticks, b.full, b.err
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
}

func (f *fakeSchedules) nextTick(ctx context.Context) (time.Time, error) {
	f.nextAsks <- struct{}{}
	select {
	case n := <-f.nexts:
		return n.at, n.err
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// taker returns a taker of f on clock, polling every minute, woken by
// wake, backing off failures seconds after failures failed passes and
// waiting no time at all for it.
func taker(f *fakeSchedules, clock *fakeClock, wake <-chan struct{}, log *logRecorder) *ScheduleTaker[string] {
	return NewScheduleTaker(ScheduleConfig[string]{
		PollInterval: time.Minute,
		Clock:        clock,
		Wake:         wake,
		TakeBatch:    f.takeBatch,
		NextTick:     f.nextTick,
		Backoff: func(failures int) time.Duration {
			f.backoffs <- failures
			return time.Duration(failures) * time.Second
		},
		Wait: func(_ context.Context, d time.Duration) bool {
			f.waits <- d
			return true
		},
		Logger: slogOf(log),
		OnTick: func(tick string) { f.ticks <- tick },
		OnPass: func(n int, err error) { f.passes <- pass{int64(n), err} },
	})
}

// expectBatchAt receives the next TakeBatch call and checks its time.
func expectBatchAt(t *testing.T, f *fakeSchedules, want time.Time) {
	t.Helper()
	if got := receive(t, f.batchAt, "batch call"); !got.Equal(want) {
		t.Fatalf("batch taken at %s, want %s", got, want)
	}
}

// expectAt receives the next At the taker waits on, checks its deadline
// and returns its channel.
func expectAt(t *testing.T, clock *fakeClock, want time.Time) chan time.Time {
	t.Helper()
	at := receive(t, clock.ats, "wait on the clock")
	if !at.t.Equal(want) {
		t.Fatalf("waits until %s, want %s", at.t, want)
	}
	return at.c
}

// expectPass receives the next pass report and checks it.
func expectPass(t *testing.T, f *fakeSchedules, ticks int64, err error) {
	t.Helper()
	p := receive(t, f.passes, "pass")
	if p.n != ticks || !errors.Is(p.err, err) || (err == nil) != (p.err == nil) {
		t.Fatalf("pass %+v, want %d ticks and error %v", p, ticks, err)
	}
}

// The taker's first pass runs at start and takes batches until one comes
// back short, reporting each tick in order and the pass once; it then
// waits on the clock until the next tick when that comes before the poll
// interval, else for the poll interval. The clock's deadline, Wake and
// nothing else start the next passes; only a pass that took ticks logs.
func TestScheduleTakerPassesAndWaits(t *testing.T) {
	f := newFakeSchedules()
	clock := newFakeClock()
	log := &logRecorder{}
	wake := make(chan struct{}, 1)
	s := taker(f, clock, wake, log)
	f.batches <- batch{ticks: []string{"a", "b"}, full: true}
	f.batches <- batch{ticks: []string{"c"}}
	f.nexts <- next{at: t0.Add(20 * time.Second)}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectBatchAt(t, f, t0)
	expectBatchAt(t, f, t0)
	for _, want := range []string{"a", "b", "c"} {
		if got := receive(t, f.ticks, "tick"); got != want {
			t.Fatalf("tick %q, want %q", got, want)
		}
	}
	expectPass(t, f, 3, nil)
	due := expectAt(t, clock, t0.Add(20*time.Second))

	// The next tick came due: an empty pass, and no schedule left.
	clock.set(t0.Add(20 * time.Second))
	f.batches <- batch{}
	f.nexts <- next{}
	due <- clock.Now()
	expectBatchAt(t, f, t0.Add(20*time.Second))
	expectPass(t, f, 0, nil)
	expectAt(t, clock, t0.Add(80*time.Second))

	// A wake, with the next tick beyond the poll interval.
	f.batches <- batch{}
	f.nexts <- next{at: t0.Add(time.Hour)}
	wake <- struct{}{}
	expectBatchAt(t, f, t0.Add(20*time.Second))
	expectPass(t, f, 0, nil)
	expectAt(t, clock, t0.Add(80*time.Second))
	s.Stop()

	if n := len(f.nextAsks); n != 3 {
		t.Fatalf("%d NextTick calls, want 3", n)
	}
	none(t, f.batchAt, "batch call")
	none(t, f.ticks, "tick")
	none(t, f.passes, "pass")
	none(t, f.backoffs, "backoff")
	want := []string{"DEBUG docket worker took schedule ticks ticks=3"}
	if got := log.lines("ticks"); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// A failed batch or NextTick ends its pass with a report of the ticks
// taken so far and the error and a warning; the taker waits Backoff of the
// failures in a row and tries again at once, and a successful pass starts
// the count over.
func TestScheduleTakerBacksOffFailedPasses(t *testing.T) {
	f := newFakeSchedules()
	clock := newFakeClock()
	log := &logRecorder{}
	s := taker(f, clock, nil, log)
	boom, bust := errors.New("boom"), errors.New("bust")
	f.batches <- batch{err: boom}
	f.batches <- batch{ticks: []string{"x"}}
	f.nexts <- next{err: bust}
	f.batches <- batch{}
	f.nexts <- next{}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectPass(t, f, 0, boom)
	expectPass(t, f, 1, bust)
	expectPass(t, f, 0, nil)
	due := expectAt(t, clock, t0.Add(time.Minute))
	for _, want := range []int{1, 2} {
		if got := receive(t, f.backoffs, "backoff"); got != want {
			t.Fatalf("backoff after %d failures, want %d", got, want)
		}
		if got := receive(t, f.waits, "backoff wait"); got != time.Duration(want)*time.Second {
			t.Fatalf("waited %s, want %ds", got, want)
		}
	}

	// A failure after the success backs off from one failure again.
	f.batches <- batch{err: boom}
	f.batches <- batch{}
	f.nexts <- next{}
	due <- t0
	expectPass(t, f, 0, boom)
	expectPass(t, f, 0, nil)
	if got := receive(t, f.backoffs, "backoff"); got != 1 {
		t.Fatalf("backoff after %d failures, want 1", got)
	}
	expectAt(t, clock, t0.Add(time.Minute))
	s.Stop()

	if n := len(f.batchAt); n != 5 {
		t.Fatalf("%d batch calls, want 5", n)
	}
	if got := receive(t, f.ticks, "tick"); got != "x" {
		t.Fatalf("tick %q, want x", got)
	}
	none(t, f.ticks, "tick")
	want := []string{
		"WARN docket worker schedule pass failed; trying again error=boom retry_in=1s",
		"DEBUG docket worker took schedule ticks ticks=1",
		"WARN docket worker schedule pass failed; trying again error=bust retry_in=2s",
		"WARN docket worker schedule pass failed; trying again error=boom retry_in=1s",
	}
	if got := log.lines("ticks", "error", "retry_in"); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}

// A pass that Stop cuts short, in a batch or in NextTick, reports and logs
// nothing; neither does a backoff wait that Stop ends.
func TestScheduleTakerStopCutsShortSilently(t *testing.T) {
	boom := errors.New("boom")
	for name, setup := range map[string]func(f *fakeSchedules){
		"in a batch":    func(*fakeSchedules) {},
		"in NextTick":   func(f *fakeSchedules) { f.batches <- batch{} },
		"in a back-off": func(f *fakeSchedules) { f.batches <- batch{err: boom} },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeSchedules()
			log := &logRecorder{}
			waiting := make(chan struct{})
			s := NewScheduleTaker(ScheduleConfig[string]{
				PollInterval: time.Minute,
				Clock:        newFakeClock(),
				TakeBatch:    f.takeBatch,
				NextTick:     f.nextTick,
				Backoff:      func(int) time.Duration { return time.Second },
				Wait: func(ctx context.Context, _ time.Duration) bool {
					close(waiting)
					<-ctx.Done()
					return false
				},
				Logger: slogOf(log),
				OnPass: func(n int, err error) { f.passes <- pass{int64(n), err} },
			})
			setup(f)
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			switch name {
			case "in a batch":
				receive(t, f.batchAt, "batch call")
			case "in NextTick":
				receive(t, f.nextAsks, "NextTick call")
			case "in a back-off":
				receive(t, waiting, "backoff wait")
				expectPass(t, f, 0, boom)
			}
			s.Stop()
			none(t, f.passes, "pass")
			lines := log.lines()
			if name == "in a back-off" {
				lines = lines[1:]
			}
			if len(lines) != 0 {
				t.Fatalf("log %q after the stop, want nothing", lines)
			}
		})
	}
}
