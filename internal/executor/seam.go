package executor

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Plan is one commit the executor writes under the claim: a verdict, a
// checkpoint, or the hand-back of a stopping Worker.
type Plan interface {
	// ReleasesClaim reports whether the commit ends the claim.
	ReleasesClaim() bool
	// Yields reports whether the commit makes the run due now with its
	// admission kept, so the domain's Workers should hear of it.
	Yields() bool
}

// Fence is what the next commit of the claim expects and keeps: the
// run's checkpoint sequence and its current step. A write's answer also
// carries the run's document as it left it, when the store returned it.
type Fence struct {
	Seq   int64
	Step  int
	State []byte
}

// Answer classifies an error of a write under the claim.
type Answer int

const (
	// Unanswered: the write failed without an answer (a lost connection, a
	// timeout), so it may have committed all the same.
	Unanswered Answer = iota
	// Fenced: the claim fence refused the write; a newer holder owns the
	// run, or it is gone.
	Fenced
	// Cancelled: the fence refused the write because an operator cancelled
	// the run.
	Cancelled
	// Invalid: the store refused the write's arguments; nothing changed.
	Invalid
)

// Store is what the executor needs of the run store, bound to one claim.
type Store[P Plan] interface {
	// Commit writes p alone, fenced on f, and returns the new fence.
	Commit(ctx context.Context, f Fence, p P) (Fence, error)
	// CommitGrouped writes p, a verdict that releases the claim, in one
	// statement with other jobs' verdicts (package jobcompleter) and
	// returns the new fence and how many commits the statement carried.
	// jobcompleter.ErrAlone means p cannot share a statement, and
	// jobcompleter.ErrFlushFailed that the statement failed as a whole: the
	// executor then writes p alone.
	CommitGrouped(ctx context.Context, f Fence, p P) (Fence, int, error)
	// CommitTx writes p in tx, the handler's own transaction.
	CommitTx(ctx context.Context, tx pgx.Tx, f Fence, p P) error
	// Applied reports whether the commit of p fenced on f is the run's
	// latest write.
	Applied(ctx context.Context, f Fence, p P) (bool, error)
	// Release gives the claim back without a checkpoint and reports
	// whether the store accepted it.
	Release(ctx context.Context) (bool, error)
	// Refresh refreshes the claim once.
	Refresh(ctx context.Context) error
	// Answer classifies err, an error of a write.
	Answer(err error) Answer
	// Gone reports whether err, an error of Refresh, means the store no
	// longer shows the claim.
	Gone(err error) bool
}

// Ending is how the write of one plan ended.
type Ending int

const (
	// Written: the commit took effect.
	Written Ending = iota + 1
	// AppliedEarlier: the fence refused a retry because an earlier attempt
	// of the same commit, whose answer was lost, had committed it.
	AppliedEarlier
	// Dropped: nothing was sent, since the claim was already given up or
	// may have expired before the first write could be sent.
	Dropped
	// CancelledByOperator: the fence refused the write; an operator
	// cancelled the run.
	CancelledByOperator
	// FencedOut: the fence refused the write; a newer holder owns the run.
	FencedOut
	// Refused: the store refused the verdict as invalid; the Refused plan
	// that fails the run is written next.
	Refused
	// GaveUp: the write kept failing until the claim TTL passed since the
	// claim was last known held; the claim will expire.
	GaveUp
	// Interrupted: the executor's context ended while it waited to retry.
	Interrupted
)

// Write is the telemetry of one plan's write: a span, say.
type Write interface {
	// Carried records how many commits the statement that wrote the plan
	// carried (0 when none was sent).
	Carried(n int)
	// End reports how the write ended; err is its error (nil when written
	// or applied earlier).
	End(ctx context.Context, e Ending, err error)
}

// Hooks is how the executor reports to the Worker and asks it for plans.
type Hooks[P Plan] interface {
	// Writing starts the telemetry of the write of p.
	Writing(ctx context.Context, p P) Write
	// Verdict reports the end of a stopping Worker's hand-back p, err its
	// error.
	Verdict(p P, err error)
	// Staged reports that p, the verdict the handler wrote in its own
	// transaction, committed with it.
	Staged(ctx context.Context, p P)
	// Refused is the plan that replaces one the store refused with err.
	Refused(step int, err error) P
	// Stopped is the plan of a claim a stopping Worker hands back.
	Stopped(step int) P
	// Yielded tells the domain's Workers that a run is due again now.
	Yielded(ctx context.Context)
	// Failure reports a failed store call the executor goes on after.
	Failure(ctx context.Context, msg string, err error)
	// Lost hears that a refresh found the claim gone (err its error) and
	// returns the cause the handler's context ends with.
	Lost(ctx context.Context, err error) error
	// Expired hears that the claim went unconfirmed for the claim TTL and
	// returns the cause the handler's context ends with.
	Expired(ctx context.Context) error
}

// Config is one job's executor: its store and hooks, and the Worker's
// timing.
type Config[P Plan] struct {
	Store Store[P]
	Hooks Hooks[P]
	// HeartbeatInterval and ClaimTTL are the Worker's.
	HeartbeatInterval, ClaimTTL time.Duration
	// CallTimeout bounds each store call.
	CallTimeout time.Duration
	// Backoff is the wait after the failures-th failed write in a row.
	Backoff func(failures int) time.Duration
	// Sleep waits d or until ctx ends and reports whether d passed.
	Sleep func(ctx context.Context, d time.Duration) bool
	// NotHeld is the error of a write after the claim was given up.
	NotHeld error
	// FencedOut is the cause the handler's context ends with when the
	// fence refused a write of the claim.
	FencedOut error
}

// ErrStaged is CommitTx's error when the handler already wrote a verdict
// in a transaction.
var ErrStaged = errors.New("executor: a verdict was already written in a transaction")
