package executor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Plan is one commit the executor writes under the claim: a verdict, a
// checkpoint, or the hand-back of a stopping Worker. Verdict is the
// store's own description of it; the flags are what the executor decides
// on.
type Plan[V any] struct {
	Verdict V
	// Releases says the commit ends the claim.
	Releases bool
	// Yields says the commit makes the run due now with its admission
	// kept, so the domain's Workers should hear of it.
	Yields bool
	// Shared says the commit, one that releases the claim, may share a
	// statement with other jobs' verdicts (Store.CommitGrouped).
	Shared bool
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
	// Lost: the store no longer shows the claim (an error of Refresh).
	Lost
)

// Store is what the executor needs of the run store, bound to one claim.
type Store[V any] interface {
	// Refresh refreshes the claim once.
	Refresh(ctx context.Context) error
	// Commit writes p alone, fenced on f, and returns the new fence.
	Commit(ctx context.Context, f Fence, p Plan[V]) (Fence, error)
	// CommitGrouped writes p, a Shared plan, in one statement with other
	// jobs' verdicts (package jobcompleter) and returns the new fence and
	// how many commits the statement carried. jobcompleter.ErrFlushFailed
	// means that the statement failed as a whole: the executor then writes
	// p alone.
	CommitGrouped(ctx context.Context, f Fence, p Plan[V]) (Fence, int, error)
	// CommitTx writes p in tx, the handler's own transaction.
	CommitTx(ctx context.Context, tx pgx.Tx, f Fence, p Plan[V]) error
	// Applied reports whether the commit of p fenced on f is the run's
	// latest write.
	Applied(ctx context.Context, f Fence, p Plan[V]) (bool, error)
	// Release gives the claim back without a checkpoint and reports
	// whether the store accepted it.
	Release(ctx context.Context) (bool, error)
	// Answer classifies err, an error of a write or of Refresh.
	Answer(err error) Answer
}

// Work is the job's own part: the handler it calls and the verdicts it
// plans.
type Work[V any] interface {
	// Handle calls the handler on ctx and plans its verdict; the error is
	// the one the handler reported, if any. A handler still running when
	// ctx ended with Config.TimedOut failed its attempt.
	Handle(ctx context.Context) (Plan[V], error)
	// Panicked plans the verdict of a handler that panicked with value. It
	// runs in the function that recovered the panic, while the panicking
	// goroutine's frames are still on the stack.
	Panicked(ctx context.Context, value any) (Plan[V], error)
	// Refused is the plan that replaces one the store refused with err.
	Refused(step int, err error) Plan[V]
	// Stopped is the plan of a claim a stopping Worker hands back.
	Stopped(step int) Plan[V]
}

// Slots are the places a job takes in its Worker.
type Slots struct {
	// Handlers holds one token per handler running; its capacity is the
	// Worker's concurrency, so a run claimed ahead waits for a handler to
	// return.
	Handlers chan struct{}
	// Stop is closed when the Worker is asked to stop: a job still waiting
	// for a handler slot then gives up.
	Stop <-chan struct{}
	// Unstarted counts the jobs that have neither taken a handler slot nor
	// given their claim back; the job leaves it as it begins.
	Unstarted *sync.WaitGroup
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

// EventKind names what an Event reports.
type EventKind int

const (
	// HandlerStarted: the handler starts; Report returns the context it
	// runs on.
	HandlerStarted EventKind = iota + 1
	// HandlerEnded: the handler returned Plan, with its error Err, after
	// Took; Report returns the context the verdict's writes run on.
	HandlerEnded
	// Writing: the write of Plan starts.
	Writing
	// Carried: a statement that carried Batch commits wrote Plan, or
	// failed to (0 when none was sent).
	Carried
	// Wrote: the write of Plan ended as Ending; Err is its error (nil when
	// written or applied earlier).
	Wrote
	// Staged: Plan, the verdict the handler wrote in its own transaction,
	// committed with it.
	Staged
	// HandedBack: a claim was given back for a stopping Worker, or for a
	// job whose handler could not start: Released says whether the store
	// accepted it, Err is the failure; Checkpointed says it was the commit
	// of Plan, the Stopped plan, rather than a plain release.
	HandedBack
	// Yielded: a run is due again now; the domain's Workers should hear.
	Yielded
	// Failed: a store call failed (Msg says which, Err its error) and the
	// executor goes on after it.
	Failed
	// ClaimLost: a refresh found the claim gone (Err its error); the
	// handler's context ends.
	ClaimLost
	// ClaimExpired: the claim went unconfirmed for the claim TTL; the
	// handler's context ends.
	ClaimExpired
)

// Event is what the executor reports of its job; which fields are set
// depends on Kind.
type Event[V any] struct {
	Kind   EventKind
	Plan   Plan[V]
	Ending Ending
	Batch  int
	Err    error
	Msg    string
	Took   time.Duration
	// Released and Checkpointed are a hand-back's.
	Released, Checkpointed bool
}

// Reporter turns what happened to a job into logs, metrics, spans and
// events.
type Reporter[V any] interface {
	// Report hears e and returns ctx, or ctx carrying a span the job's
	// next calls belong to (HandlerStarted, HandlerEnded).
	Report(ctx context.Context, e Event[V]) context.Context
}

// Config is one job's executor: its store, work, slots and reporter, and
// the Worker's timing.
type Config[V any] struct {
	Store    Store[V]
	Work     Work[V]
	Slots    Slots
	Reporter Reporter[V]
	// HeartbeatInterval and ClaimTTL are the Worker's.
	HeartbeatInterval, ClaimTTL time.Duration
	// CallTimeout bounds each store call.
	CallTimeout time.Duration
	// Timeout is the handler's timeout (0 for none), and TimedOut the
	// cause its context ends with once the timeout passed.
	Timeout  time.Duration
	TimedOut error
	// Backoff is the wait after the failures-th failed write in a row.
	Backoff func(failures int) time.Duration
	// Sleep waits d or until ctx ends and reports whether d passed.
	Sleep func(ctx context.Context, d time.Duration) bool
	// Unreadable is the error of a read of the claimed run that failed, nil
	// when the run was read (its step is the first fence's): the claim is
	// then given back without a checkpoint, and no handler runs.
	Unreadable error
	// NotHeld is the error of a write after the claim was given up.
	NotHeld error
	// The causes the handler's context ends with: FencedOut when the
	// fence refused a write of the claim, Cancelled when a refresh found
	// the run cancelled, Lost when it found the claim gone otherwise,
	// Expired when the claim went unconfirmed for the claim TTL.
	FencedOut, Cancelled, Lost, Expired error
}

// ErrStaged is CommitTx's error when the handler already wrote a verdict
// in a transaction.
var ErrStaged = errors.New("executor: a verdict was already written in a transaction")
