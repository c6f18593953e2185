package jobcompleter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docketrun/docket-go/internal/movingavg"
)

// CohortWait bounds how long a leading verdict waits for the verdicts of
// the other jobs of its claim call before it is written without them.
const CohortWait = 200 * time.Microsecond

// ErrFlushFailed reports a statement that failed as a whole, so none of its
// verdicts is known to be written; it wraps the statement's own error.
var ErrFlushFailed = errors.New("jobcompleter: statement failed")

// Flush writes verdicts as one statement and returns one result per
// verdict, in order. An error means the statement failed as a whole: every
// verdict then reports it, wrapped in ErrFlushFailed.
type Flush[T, R any] func(ctx context.Context, items []T) ([]Result[R], error)

// Result is the outcome of one verdict of a flushed statement.
type Result[R any] struct {
	// Value is what the flush returned for the verdict.
	Value R
	// Err is the verdict's own failure; nil when it was written.
	Err error
}

// Timer starts a timer of d: its channel receives when d passed, and stop
// releases it early.
type Timer func(d time.Duration) (c <-chan time.Time, stop func())

// Cohort is the jobs of one claim call, whose verdicts a leader awaits.
// Its zero value is an empty cohort; the completer's mutex guards it.
type Cohort struct {
	// awaiting counts the members that neither wrote nor settled yet.
	awaiting int
}

// Member is one job of a cohort whose verdict is still expected. The
// completer's mutex guards it.
type Member struct {
	cohort  *Cohort
	awaited bool
}

// Config is a completer's statement and batching.
type Config[T, R any] struct {
	// Flush sends one statement.
	Flush Flush[T, R]
	// CallTimeout bounds each statement.
	CallTimeout time.Duration
	// BatchWait, when positive, makes verdicts linger for a batch: a
	// statement waits BatchWait for the verdicts of any job, or until
	// MaxBatch of them are pending. Otherwise the completer decides for
	// each statement from what it measured: it lingers LingerFor(the
	// average statement's time) for the verdicts of any job, or until
	// AdaptiveBatch of them are pending, while verdicts have been arriving
	// closer together than that, and else waits at most CohortWait for the
	// rest of its leader's cohort.
	BatchWait time.Duration
	// MaxBatch is the most verdicts a statement lingering BatchWait waits
	// for.
	MaxBatch int
	// LingerFor and AdaptiveBatch are the adaptive statement's linger and
	// bound.
	LingerFor     func(statement time.Duration) time.Duration
	AdaptiveBatch int
}

// Completer folds the verdicts of concurrent jobs into shared statements;
// see the package doc. A Completer must be made by New.
type Completer[T, R any] struct {
	flush       Flush[T, R]
	callTimeout time.Duration
	// wait bounds a leader's wait for the rest of its cohort.
	wait  time.Duration
	timer Timer
	// fixed, when positive, makes the completer linger: a leader waits
	// fixed for verdicts of any job instead of waiting for its cohort, and
	// stops once full verdicts are pending.
	fixed time.Duration
	full  int
	// adaptive makes the completer decide for each leader whether it
	// lingers, and how long: full is then the lingering leader's bound,
	// lingerFor its linger given the average statement, and now the clock
	// of its measurements.
	adaptive  bool
	lingerFor func(statement time.Duration) time.Duration
	now       func() time.Time
	// changed receives a value, if none is pending, whenever a verdict
	// arrives or a member stops being awaited.
	changed chan struct{}

	// mu guards the fields below and every Cohort and Member of the
	// completer.
	mu sync.Mutex
	// leading is set while some verdict holds the lead.
	leading bool
	// pending are the verdicts waiting for the next statement.
	pending []*entry[T, R]
	// hurried is set by Hurry: no leader lingers any more.
	hurried bool
	// prompts counts the pending verdicts that may not wait (Complete's
	// prompt), and the calls of EndWaits while verdicts were pending: while
	// it is positive, no leader lingers.
	prompts int
	// statements and gaps average, for an adaptive completer, how long a
	// statement took and how far apart verdicts arrived; lastArrival is
	// when the latest verdict arrived.
	statements, gaps movingavg.Duration
	lastArrival      time.Time
}

// entry is one verdict waiting in the completer, and its outcome.
type entry[T, R any] struct {
	item T
	// woken receives once the outcome below is set, or once when the
	// entry is handed the lead.
	woken chan struct{}
	// lead is set, under the completer's mutex, when the entry is handed
	// the lead; a queued entry that has it can no longer leave.
	lead bool
	// prompt is what Complete's prompt answered.
	prompt bool

	res Result[R]
	// size is the number of verdicts of the statement that carried this
	// one.
	size int
}

// New returns the completer of cfg: a lingering one when cfg.BatchWait is
// set, else an adaptive one.
func New[T, R any](cfg Config[T, R]) *Completer[T, R] {
	if cfg.BatchWait > 0 {
		return lingering(cfg.Flush, cfg.CallTimeout, cfg.BatchWait, cfg.MaxBatch, nil)
	}
	return adapting(cfg.Flush, cfg.CallTimeout, CohortWait, cfg.AdaptiveBatch, cfg.LingerFor, nil, nil)
}

// byCohort returns a completer whose leader waits at most wait for the rest
// of its cohort, measured by timer (nil is the system clock's); each
// statement runs under callTimeout (none when 0).
func byCohort[T, R any](flush Flush[T, R], callTimeout, wait time.Duration, timer Timer) *Completer[T, R] {
	if timer == nil {
		timer = systemTimer
	}
	return &Completer[T, R]{flush: flush, callTimeout: callTimeout, wait: wait, timer: timer, changed: make(chan struct{}, 1)}
}

// lingering returns a completer whose leader waits linger for the verdicts
// of every job, whatever their cohort, so that verdicts which do not finish
// together still share a statement; it flushes early once full verdicts
// are pending, or at once after Hurry. While a prompt verdict is pending a
// leader waits for its cohort instead, at most CohortWait. linger and full
// must be positive.
func lingering[T, R any](flush Flush[T, R], callTimeout, linger time.Duration, full int, timer Timer) *Completer[T, R] {
	c := byCohort(flush, callTimeout, CohortWait, timer)
	c.fixed, c.full = linger, full
	return c
}

// adapting returns a completer that decides for each leader from what it
// measured: the moving averages of a statement's time and of the gap
// between verdicts. The leader lingers lingerFor(average statement) for the
// verdicts of any job, flushing early once full verdicts are pending or
// after Hurry, when verdicts have been arriving closer together than that
// linger; otherwise it waits for its cohort, at most wait. So a leader
// lingers only while another verdict is likely to arrive meanwhile. now is
// the clock of the measurements and timer of the waits; nil is the system
// clock's. full must be positive.
func adapting[T, R any](flush Flush[T, R], callTimeout, wait time.Duration, full int, lingerFor func(time.Duration) time.Duration, timer Timer, now func() time.Time) *Completer[T, R] {
	c := byCohort(flush, callTimeout, wait, timer)
	c.adaptive, c.lingerFor, c.full, c.now = true, lingerFor, full, now
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// systemTimer is a Timer of the system clock.
func systemTimer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Join adds a job to cohort: a leader of the cohort awaits its verdict
// until it completes (Complete) or settles (Settle).
func (c *Completer[T, R]) Join(cohort *Cohort) *Member {
	c.mu.Lock()
	defer c.mu.Unlock()
	cohort.awaiting++
	return &Member{cohort: cohort, awaited: true}
}

// Settle stops awaiting m's verdict, if it still was: the job ended having
// written without the completer, or not at all.
func (c *Completer[T, R]) Settle(m *Member) {
	c.mu.Lock()
	c.forget(m)
	c.mu.Unlock()
	c.signal()
}

// Hurry ends every lingering wait, now and later: a stopping Worker's
// verdicts are written as soon as they come. It leaves cohort waits as
// they are.
func (c *Completer[T, R]) Hurry() {
	c.mu.Lock()
	c.hurried = true
	c.mu.Unlock()
	c.signal()
}

// EndWaits ends the wait of the verdicts pending now, as a prompt verdict
// would: a leader that lingers for more sends its statement at once.
func (c *Completer[T, R]) EndWaits() {
	c.mu.Lock()
	if len(c.pending) > 0 {
		c.prompts++
	}
	c.mu.Unlock()
	c.signal()
}

// forget stops awaiting m. The caller holds c.mu.
func (c *Completer[T, R]) forget(m *Member) {
	if m.awaited {
		m.awaited = false
		m.cohort.awaiting--
	}
}

// signal wakes a leader waiting in gather.
func (c *Completer[T, R]) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// Complete writes item, m's verdict, in one statement with the verdicts of
// other jobs and returns its result and how many verdicts the statement
// carried. prompt is asked as the verdict is queued whether it is prompt:
// a prompt verdict does not linger, as a leader that lingers for more
// verdicts sends its statement as soon as one is pending, and one that
// leads while one is pending waits only for its cohort. A statement
// that failed as a whole is ErrFlushFailed. When ctx ends while the
// verdict is still queued, it is not written and ctx's error returns with
// size 0; once its statement is being sent, or it was handed the lead, it
// waits for that statement, which ctx bounds.
func (c *Completer[T, R]) Complete(ctx context.Context, m *Member, item T, prompt func() bool) (R, int, error) {
	res, size := c.write(ctx, m, item, prompt)
	return res.Value, size, res.Err
}

// write is Complete's queueing and leading: the first verdict to arrive
// while no statement is in flight leads.
func (c *Completer[T, R]) write(ctx context.Context, m *Member, item T, prompt func() bool) (Result[R], int) {
	e := &entry[T, R]{item: item, woken: make(chan struct{}, 1)}
	c.mu.Lock()
	c.forget(m)
	if err := ctx.Err(); err != nil {
		c.mu.Unlock()
		c.signal()
		return Result[R]{Err: err}, 0
	}
	c.pending = append(c.pending, e)
	// Asked under the mutex, so that an EndWaits either comes before and
	// shows in the answer, or after and finds the verdict pending.
	if e.prompt = prompt(); e.prompt {
		c.prompts++
	}
	if c.adaptive {
		c.noteArrival()
	}
	lead := !c.leading
	c.leading = true
	c.mu.Unlock()
	c.signal()
	if !lead {
		select {
		case <-e.woken:
		case <-ctx.Done():
			if c.leave(e) {
				return Result[R]{Err: ctx.Err()}, 0
			}
			<-e.woken
		}
	}
	if lead || e.lead {
		c.lead(ctx, m.cohort)
	}
	return e.res, e.size
}

// noteArrival adds the time since the previous verdict to the average gap
// between verdicts. The caller holds c.mu.
func (c *Completer[T, R]) noteArrival() {
	now := c.now()
	if !c.lastArrival.IsZero() {
		c.gaps.Observe(now.Sub(c.lastArrival))
	}
	c.lastArrival = now
}

// linger is how long a leader that leads now waits for the verdicts of any
// job; 0 means it waits for its cohort instead, as it does while a prompt
// verdict is pending. The caller holds c.mu.
func (c *Completer[T, R]) linger() time.Duration {
	switch {
	case c.prompts > 0:
		return 0
	case !c.adaptive:
		return c.fixed
	case c.hurried:
		return 0
	}
	statement, gap := c.statements.Value(), c.gaps.Value()
	if statement == 0 || gap == 0 {
		return 0
	}
	if linger := c.lingerFor(statement); gap < linger {
		return linger
	}
	return 0
}

// leave takes e out of the queue and reports whether it was still queued
// without the lead.
func (c *Completer[T, R]) leave(e *entry[T, R]) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.lead {
		return false
	}
	for i, p := range c.pending {
		if p == e {
			c.pending = append(c.pending[:i], c.pending[i+1:]...)
			if e.prompt {
				c.prompts--
			}
			return true
		}
	}
	return false
}

// lead sends every pending verdict in one statement once gathered, then
// passes the lead on to the oldest verdict queued meanwhile, or gives it
// up.
func (c *Completer[T, R]) lead(ctx context.Context, cohort *Cohort) {
	c.gather(ctx, cohort)
	c.mu.Lock()
	batch := c.pending
	c.pending, c.prompts = nil, 0
	c.mu.Unlock()

	c.send(ctx, batch)
	for _, e := range batch {
		e.woken <- struct{}{}
	}

	c.mu.Lock()
	var next *entry[T, R]
	if len(c.pending) > 0 {
		next = c.pending[0]
		next.lead = true
	} else {
		c.leading = false
	}
	c.mu.Unlock()
	if next != nil {
		next.woken <- struct{}{}
	}
}

// send sends batch as one statement, under the call timeout, and sets each
// entry's outcome.
func (c *Completer[T, R]) send(ctx context.Context, batch []*entry[T, R]) {
	items := make([]T, len(batch))
	for i, e := range batch {
		items[i] = e.item
		e.size = len(batch)
	}
	var start time.Time
	if c.adaptive {
		start = c.now()
	}
	if c.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.callTimeout)
		defer cancel()
	}
	results, err := c.flush(ctx, items)
	if c.adaptive {
		took := c.now().Sub(start)
		c.mu.Lock()
		c.statements.Observe(took)
		c.mu.Unlock()
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
// settled, or the wait passed, or ctx ended: the jobs of one claim call
// start together and often finish together, and their verdicts then share
// one statement. A lingering leader (see linger) instead waits its linger
// for the verdicts of any job, until the batch is full or Hurry.
func (c *Completer[T, R]) gather(ctx context.Context, cohort *Cohort) {
	var expired <-chan time.Time
	c.mu.Lock()
	defer c.mu.Unlock()
	linger := c.linger()
	wait := c.wait
	if linger > 0 {
		wait = linger
	}
	for c.waiting(cohort, linger > 0) {
		if expired == nil {
			ch, stop := c.timer(wait)
			defer stop()
			expired = ch
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
			c.mu.Lock()
		case <-expired:
			c.mu.Lock()
			return
		case <-ctx.Done():
			c.mu.Lock()
			return
		}
	}
}

// waiting reports whether a leader of cohort still waits for more
// verdicts: a lingering leader until Hurry, until the batch is full or
// until a prompt verdict is pending, any other until its cohort wrote or
// settled. The caller holds c.mu.
func (c *Completer[T, R]) waiting(cohort *Cohort, lingering bool) bool {
	if lingering {
		return !c.hurried && len(c.pending) < c.full && c.prompts == 0
	}
	return cohort.awaiting > 0
}
