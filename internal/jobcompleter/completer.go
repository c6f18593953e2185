package jobcompleter

import (
	"context"
	"errors"
	"time"

	"github.com/docketrun/docket-go/internal/groupcommit"
)

// CohortWait bounds how long a leading verdict waits for the verdicts of
// the other jobs of its claim call before it is written without them.
const CohortWait = 200 * time.Microsecond

// Errors of Complete.
var (
	// ErrAlone reports a verdict that cannot share a statement; nothing
	// was sent, and the caller writes it alone.
	ErrAlone = errors.New("jobcompleter: the verdict cannot share a statement")
	// ErrFlushFailed reports a statement that failed as a whole, so the
	// verdict may or may not have been written; it wraps the statement's
	// own error.
	ErrFlushFailed = groupcommit.ErrFlushFailed
)

// Cohort is the jobs of one claim call, whose verdicts a leader awaits.
type Cohort = groupcommit.Cohort

// Member is one job of a cohort whose verdict is still expected.
type Member = groupcommit.Member

// Result is the outcome of one verdict of a flushed statement.
type Result[R any] = groupcommit.Result[R]

// Config is a completer's statement and batching.
type Config[T, R any] struct {
	// Flush writes verdicts as one statement and returns one result per
	// verdict, in order; an error means the statement failed as a whole.
	Flush func(ctx context.Context, items []T) ([]Result[R], error)
	// CallTimeout bounds each statement.
	CallTimeout time.Duration
	// Batchable reports whether a verdict may share a statement.
	Batchable func(T) bool
	// BatchWait, when positive, makes verdicts linger for a batch: a
	// statement waits BatchWait for the verdicts of any job, or until
	// MaxBatch of them are pending. Otherwise the completer decides for
	// each statement from what it measured (groupcommit.Adapt): it lingers
	// LingerFor(the average statement's time) for the verdicts of any job,
	// or until AdaptiveBatch of them are pending, while verdicts have been
	// arriving closer together than that, and else waits at most
	// CohortWait for the rest of its leader's cohort.
	BatchWait time.Duration
	// MaxBatch is the most verdicts a statement lingering BatchWait waits
	// for.
	MaxBatch int
	// LingerFor and AdaptiveBatch are the adaptive statement's linger and
	// bound.
	LingerFor     func(statement time.Duration) time.Duration
	AdaptiveBatch int
}

// Completer writes batchable verdicts in shared statements; see the package
// doc.
type Completer[T, R any] struct {
	group     *groupcommit.Group[T, R]
	batchable func(T) bool
}

// New returns the completer of cfg.
func New[T, R any](cfg Config[T, R]) *Completer[T, R] {
	flush := func(ctx context.Context, items []T) ([]Result[R], error) {
		ctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout)
		defer cancel()
		return cfg.Flush(ctx, items)
	}
	c := &Completer[T, R]{batchable: cfg.Batchable}
	if cfg.BatchWait > 0 {
		c.group = groupcommit.Linger(flush, cfg.BatchWait, cfg.MaxBatch, nil)
	} else {
		c.group = groupcommit.Adapt(flush, CohortWait, cfg.AdaptiveBatch, cfg.LingerFor, nil, nil)
	}
	return c
}

// Join adds a job to cohort: a leader of the cohort awaits its verdict
// until it completes (Complete) or settles (Settle).
func (c *Completer[T, R]) Join(cohort *Cohort) *Member { return c.group.Join(cohort) }

// Settle stops awaiting m's verdict, if it still was: the job ended having
// written without the completer, or not at all.
func (c *Completer[T, R]) Settle(m *Member) { c.group.Settle(m) }

// Hurry ends every lingering wait, now and later: a stopping Worker's
// verdicts are written as soon as they come.
func (c *Completer[T, R]) Hurry() { c.group.Hurry() }

// Complete writes item, m's verdict, in one statement with other jobs'
// verdicts and returns its result and how many verdicts the statement
// carried. A verdict that is not batchable is ErrAlone, with nothing sent;
// a batchable one calls admitted (when not nil) before it joins a
// statement. A statement that failed as a whole is ErrFlushFailed. When ctx
// ends while the verdict is still queued, it is not written and ctx's error
// returns with size 0.
func (c *Completer[T, R]) Complete(ctx context.Context, m *Member, item T, admitted func()) (R, int, error) {
	if !c.batchable(item) {
		var zero R
		return zero, 0, ErrAlone
	}
	if admitted != nil {
		admitted()
	}
	res, size := c.group.Write(ctx, m, item)
	return res.Value, size, res.Err
}
