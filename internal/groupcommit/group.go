package groupcommit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/docketrun/docket-go/internal/movingavg"
)

// Flush writes items as one batch and returns one result per item, in the
// order of items. An error means the batch failed as a whole: every item
// then reports it, wrapped in ErrFlushFailed.
type Flush[T, R any] func(ctx context.Context, items []T) ([]Result[R], error)

// Result is the outcome of one item of a flushed batch.
type Result[R any] struct {
	// Value is what the flush returned for the item.
	Value R
	// Err is the item's own failure; nil when it was written.
	Err error
}

// Timer starts a timer of d: its channel receives when d passed, and stop
// releases it early.
type Timer func(d time.Duration) (c <-chan time.Time, stop func())

// Group batches the writes of concurrent callers; see the package doc. A
// Group must be made by New.
type Group[T, R any] struct {
	flush Flush[T, R]
	wait  time.Duration
	timer Timer
	// full, when positive, makes the group linger (see Linger): a leader
	// waits the whole wait for writes of any caller instead of waiting for
	// its cohort, and stops once full writes are pending.
	full int
	// adaptive makes the group decide for each leader whether it lingers,
	// and how long (see Adapt): full is then the lingering leader's bound,
	// lingerFor its linger given the average flush, and now the clock of
	// its measurements.
	adaptive  bool
	lingerFor func(flush time.Duration) time.Duration
	now       func() time.Time
	// changed receives a value, if none is pending, whenever a write
	// arrives or a member stops being awaited.
	changed chan struct{}

	// mu guards the fields below and every Cohort and Member of the group.
	mu sync.Mutex
	// leading is set while some caller holds the lead.
	leading bool
	// pending are the writes waiting for the next batch.
	pending []*entry[T, R]
	// hurried is set by Hurry: no leader lingers any more.
	hurried bool
	// flushes and gaps average, for an adaptive group, how long a flush
	// took and how far apart writes arrived; lastArrival is when the
	// latest write arrived.
	flushes, gaps movingavg.Duration
	lastArrival   time.Time
}

// entry is one write waiting in the group, and its outcome.
type entry[T, R any] struct {
	item T
	// woken receives once the outcome below is set, or once when the
	// entry is handed the lead.
	woken chan struct{}
	// lead is set, under the group's mutex, when the entry is handed the
	// lead; a queued entry that has it can no longer leave.
	lead bool

	res Result[R]
	// size is the number of items of the batch that carried this one.
	size int
}

// New returns a group that sends batches through flush. A leader waits at
// most wait for the rest of its cohort, measured by timer; a nil timer is
// the system clock's.
func New[T, R any](flush Flush[T, R], wait time.Duration, timer Timer) *Group[T, R] {
	if timer == nil {
		timer = systemTimer
	}
	return &Group[T, R]{flush: flush, wait: wait, timer: timer, changed: make(chan struct{}, 1)}
}

// Linger returns a group whose leader waits linger for the writes of every
// caller, whatever their cohort, so that writes which do not finish together
// still share a batch; it flushes early once full writes are pending, or
// at once after Hurry. linger and full must be positive.
func Linger[T, R any](flush Flush[T, R], linger time.Duration, full int, timer Timer) *Group[T, R] {
	g := New(flush, linger, timer)
	g.full = full
	return g
}

// Adapt returns a group that decides for each leader from what it measured:
// the moving averages of a flush's time and of the gap between writes. The
// leader lingers lingerFor(average flush) for the writes of any caller,
// flushing early once full writes are pending or after Hurry, when writes
// have been arriving closer together than that linger; otherwise it waits
// for its cohort, at most wait, as a leader of a group made by New does.
// So a leader lingers only while another write is likely to arrive
// meanwhile. now is the clock of the measurements and timer of the waits;
// nil is the system clock's. full must be positive.
func Adapt[T, R any](flush Flush[T, R], wait time.Duration, full int, lingerFor func(flush time.Duration) time.Duration, timer Timer, now func() time.Time) *Group[T, R] {
	g := New(flush, wait, timer)
	g.adaptive, g.lingerFor, g.full, g.now = true, lingerFor, full, now
	if g.now == nil {
		g.now = time.Now
	}
	return g
}

// Hurry ends the lingering of the current leader, if any, and of every later
// one: from now on a batch is flushed as soon as its leader leads, as a
// stopping caller needs. A group made by New does not linger; Hurry leaves
// its cohort waits as they are.
func (g *Group[T, R]) Hurry() {
	g.mu.Lock()
	g.hurried = true
	g.mu.Unlock()
	g.signal()
}

// systemTimer is a Timer of the system clock.
func systemTimer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Join adds a member to cohort, whose write a leader of the cohort now
// awaits until the member writes (Write) or settles (Settle).
func (g *Group[T, R]) Join(cohort *Cohort) *Member {
	g.mu.Lock()
	defer g.mu.Unlock()
	cohort.awaiting++
	return &Member{cohort: cohort, awaited: true}
}

// Settle stops awaiting m, if it still was: m ends having written without
// the group, or not at all.
func (g *Group[T, R]) Settle(m *Member) {
	g.mu.Lock()
	g.forget(m)
	g.mu.Unlock()
	g.signal()
}

// forget stops awaiting m. The caller holds g.mu.
func (g *Group[T, R]) forget(m *Member) {
	if m.awaited {
		m.awaited = false
		m.cohort.awaiting--
	}
}

// signal wakes a leader waiting in gather.
func (g *Group[T, R]) signal() {
	select {
	case g.changed <- struct{}{}:
	default:
	}
}

// Write writes item, m's write, in a batch with the writes of other callers
// and returns its result and the number of items of its batch. A flush that
// failed as a whole is an ErrFlushFailed result. When ctx ends while the
// write is still queued, it leaves the queue unwritten and returns ctx's
// error with size 0; once its batch is being flushed, or it was handed the
// lead, it waits for that flush, which ctx bounds.
func (g *Group[T, R]) Write(ctx context.Context, m *Member, item T) (Result[R], int) {
	e := &entry[T, R]{item: item, woken: make(chan struct{}, 1)}
	g.mu.Lock()
	g.forget(m)
	if err := ctx.Err(); err != nil {
		g.mu.Unlock()
		g.signal()
		return Result[R]{Err: err}, 0
	}
	g.pending = append(g.pending, e)
	if g.adaptive {
		g.noteArrival()
	}
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	g.signal()
	if !lead {
		select {
		case <-e.woken:
		case <-ctx.Done():
			if g.leave(e) {
				return Result[R]{Err: ctx.Err()}, 0
			}
			<-e.woken
		}
	}
	if lead || e.lead {
		g.lead(ctx, m.cohort)
	}
	return e.res, e.size
}

// noteArrival adds the time since the previous write to the average gap
// between writes. The caller holds g.mu.
func (g *Group[T, R]) noteArrival() {
	now := g.now()
	if !g.lastArrival.IsZero() {
		g.gaps.Observe(now.Sub(g.lastArrival))
	}
	g.lastArrival = now
}

// linger is how long a leader that leads now waits for the writes of any
// caller; 0 means it waits for its cohort instead. The caller holds g.mu.
func (g *Group[T, R]) linger() time.Duration {
	switch {
	case !g.adaptive:
		if g.full > 0 {
			return g.wait
		}
		return 0
	case g.hurried:
		return 0
	}
	flush, gap := g.flushes.Value(), g.gaps.Value()
	if flush == 0 || gap == 0 {
		return 0
	}
	if linger := g.lingerFor(flush); gap < linger {
		return linger
	}
	return 0
}

// leave takes e out of the queue and reports whether it was still queued
// without the lead.
func (g *Group[T, R]) leave(e *entry[T, R]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e.lead {
		return false
	}
	for i, p := range g.pending {
		if p == e {
			g.pending = append(g.pending[:i], g.pending[i+1:]...)
			return true
		}
	}
	return false
}

// lead flushes every pending write in one batch once gathered, then passes
// the lead on to the oldest write queued meanwhile, or gives it up.
func (g *Group[T, R]) lead(ctx context.Context, cohort *Cohort) {
	g.gather(ctx, cohort)
	g.mu.Lock()
	batch := g.pending
	g.pending = nil
	g.mu.Unlock()

	g.send(ctx, batch)
	for _, e := range batch {
		e.woken <- struct{}{}
	}

	g.mu.Lock()
	var next *entry[T, R]
	if len(g.pending) > 0 {
		next = g.pending[0]
		next.lead = true
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	if next != nil {
		next.woken <- struct{}{}
	}
}

// send flushes batch and sets each entry's outcome.
func (g *Group[T, R]) send(ctx context.Context, batch []*entry[T, R]) {
	items := make([]T, len(batch))
	for i, e := range batch {
		items[i] = e.item
		e.size = len(batch)
	}
	var start time.Time
	if g.adaptive {
		start = g.now()
	}
	results, err := g.flush(ctx, items)
	if g.adaptive {
		took := g.now().Sub(start)
		g.mu.Lock()
		g.flushes.Observe(took)
		g.mu.Unlock()
	}
	if err == nil && len(results) != len(batch) {
		err = fmt.Errorf("the flush returned %d results for %d items", len(results), len(batch))
	}
	for i, e := range batch {
		if err != nil {
			e.res = Result[R]{Err: fmt.Errorf("%w: %w", ErrFlushFailed, err)}
		} else {
			e.res = results[i]
		}
	}
}

// gather waits until every member of cohort, the leader's, wrote or
// settled, or the group's wait passed, or ctx ended: the members of one
// cohort start together and often finish together, and their writes then
// share one batch. A lingering leader (see linger) instead waits its linger
// for the writes of any caller, until the batch is full or Hurry.
func (g *Group[T, R]) gather(ctx context.Context, cohort *Cohort) {
	var expired <-chan time.Time
	g.mu.Lock()
	defer g.mu.Unlock()
	linger := g.linger()
	wait := g.wait
	if linger > 0 {
		wait = linger
	}
	for g.waiting(cohort, linger > 0) {
		if expired == nil {
			c, stop := g.timer(wait)
			defer stop()
			expired = c
		}
		g.mu.Unlock()
		select {
		case <-g.changed:
			g.mu.Lock()
		case <-expired:
			g.mu.Lock()
			return
		case <-ctx.Done():
			g.mu.Lock()
			return
		}
	}
}

// waiting reports whether a leader of cohort still waits for more writes: a
// lingering leader until Hurry or until the batch is full, any other until
// its cohort wrote or settled. The caller holds g.mu.
func (g *Group[T, R]) waiting(cohort *Cohort, lingering bool) bool {
	if lingering {
		return !g.hurried && len(g.pending) < g.full
	}
	return cohort.awaiting > 0
}
