package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/executor"
	"github.com/docketrun/docket-go/internal/jobcompleter"
	"github.com/docketrun/docket-go/internal/maintenance"
)

// errReleased reports a holder write by a job whose claim the worker already
// gave up: committed, yielded at stop, or reported lost by the store.
var errReleased = fmt.Errorf("%w: the worker no longer holds the claim", ErrClaimLost)

// Job is one claimed run handed to a Handler. Its exported fields describe
// the run as claimed; Checkpoint updates State, Step and CheckpointSeq. A Job
// belongs to its handler's goroutine: do not call Checkpoint concurrently.
type Job struct {
	// RunID is the run's public identity.
	RunID string
	// Scope is the run's owner.
	Scope Scope
	// GraphID names the workflow.
	GraphID string
	// GraphHash names the workflow version.
	GraphHash string
	// Attempt is the number of this handler attempt: the run's persisted
	// attempt counter (Run.Attempt) plus one. It is 1 for the first handler
	// call of the run, 2 for the call after one retry or failure verdict
	// (Fail, a panic, a timeout, RetryAt...), and so on, and restarts at 1
	// after a Continue or WaitExternal verdict or an operator's RetryRun.
	// Snooze, Yield and claims that ended without a verdict (a crashed or
	// stopped worker) do not count. The RetryPolicy's MaxAttempts, or the
	// run's own (MaxAttempts), is compared with it.
	Attempt int
	// MaxAttempts is the run's own max attempts (NewRun.MaxAttempts), which
	// replaces the retry policy's; 0 when it has none.
	MaxAttempts int
	// Class is the kind of candidate the claim came from; ClassExpired means
	// this worker took over a claim whose holder stopped refreshing it.
	Class WorkClass
	// ClaimedAt is when the claim that handed the run to this worker was
	// made (its claim call's Now); the handler may start later, when the
	// worker held the run ahead of its handlers (WorkerTuning.ClaimAhead).
	ClaimedAt time.Time
	// State is the run document as of the latest checkpoint.
	State json.RawMessage
	// Step is the step of the latest checkpoint.
	Step int
	// CheckpointSeq is the commit fence of the latest checkpoint.
	CheckpointSeq int64

	// Who owns what. The job goroutine (Worker.start, or WorkLease's
	// calling goroutine) runs the job's executor: it reads the run, calls
	// the handler, which owns the exported fields, and commits the verdict.
	// The fields below up to exec are set before it starts and never change
	// (route among them), or are safe for concurrent use (member, whose
	// state the completer's mutex guards, and exec, which serializes every
	// write under the claim with the heartbeat's and a stopping worker's);
	// attempt, maxAttempts and link are set by takeRead, before the job
	// starts; step and slotFreed belong to the job goroutine alone.

	worker *Worker
	holder Holder
	// route is the handler the job calls and the retry policy its failure
	// follows.
	route route
	// member is the job in its claim call's cohort of the completer.
	member *jobcompleter.Member
	// exec is the holder side of the claim: its fence, heartbeat and
	// commits (package executor).
	exec *executor.Job[commitPlan]

	// attempt is the handler attempt the policy decides on: Attempt as
	// read, whatever the handler does to the exported field.
	attempt int
	// maxAttempts is MaxAttempts as read.
	maxAttempts int
	// link is the span context the run's insert stored, read with the run;
	// invalid when it stored none.
	link trace.SpanContext
	// step is the step of the run as read, then of its latest checkpoint:
	// the step a verdict keeps unless it sets one.
	step int
	// slotFreed is set once the job's claim slot was freed ahead of its
	// end (freeSlotEarly).
	slotFreed bool
}

// The causes a handler's context ends with when its claim is lost: the
// fence refused a write of the claim, a refresh found it gone, or it went
// unconfirmed for the claim TTL.
var (
	errFencedOut      = fmt.Errorf("%w: a commit was refused by the claim fence", ErrClaimLost)
	errStoreLostClaim = fmt.Errorf("%w: the store no longer shows the claim", ErrClaimLost)
	errClaimExpired   = fmt.Errorf("%w: not refreshed within the claim TTL", ErrClaimLost)
)

// start builds the job of lease, whose run is in read, as member of its
// claim call's cohort in the completer, and runs its executor on a
// goroutine of its own with the handler's context, a child of handlers;
// io carries the job's store calls.
func (w *Worker) start(handlers, io context.Context, lease Lease, read *leaseRead, member *jobcompleter.Member) {
	j, handlerCtx := w.newJob(lease, read, member, handlers)
	go func() {
		defer w.slots.end(j)
		defer w.completer.Settle(j.member)
		j.exec.Run(handlerCtx, io)
	}()
}

// newJob builds the job of lease with its claim call's read, as member of
// the call's cohort in the completer, and the handler's context, a child
// of base; the caller runs its executor (exec.Run) on that context and
// settles its membership and its slot (slots.end) when it ends. The job
// holds a slot of the worker from now on, and counts among its unstarted
// jobs until it begins.
func (w *Worker) newJob(lease Lease, read *leaseRead, member *jobcompleter.Member, base context.Context) (*Job, context.Context) {
	handlerCtx, cancel := context.WithCancelCause(base)
	j := &Job{
		RunID:         lease.RunID,
		Scope:         lease.Scope,
		GraphID:       lease.GraphID,
		GraphHash:     lease.GraphHash,
		Class:         lease.Class,
		ClaimedAt:     lease.ClaimedAt,
		CheckpointSeq: lease.CheckpointSeq,
		worker:        w,
		holder:        lease.Holder(),
		route:         w.routeOf(lease.GraphID),
		member:        member,
	}
	unreadable := j.takeRead(read)
	var timedOut error
	if j.route.timeout > 0 {
		timedOut = &HandlerTimeoutError{Timeout: j.route.timeout}
	}
	seam := &jobSeam{j: j}
	j.exec = &executor.Job[commitPlan]{
		Config: executor.Config[commitPlan]{
			Store:             seam,
			Work:              seam,
			Slots:             w.slots.exec,
			Reporter:          seam,
			HeartbeatInterval: w.cfg.HeartbeatInterval,
			ClaimTTL:          w.cfg.ClaimTTL,
			CallTimeout:       workerCallTimeout,
			Timeout:           j.route.timeout,
			TimedOut:          timedOut,
			Backoff:           errorBackoff,
			Sleep:             maintenance.Sleep,
			Unreadable:        unreadable,
			NotHeld:           errReleased,
			FencedOut:         errFencedOut,
			Cancelled:         errRevokedCancelled,
			Lost:              errStoreLostClaim,
			Expired:           errClaimExpired,
		},
		Fence:      executor.Fence{Seq: lease.CheckpointSeq, Step: j.step},
		ClaimedAt:  lease.ClaimedAt,
		EndHandler: cancel,
	}
	w.slots.join(j)
	return j, handlerCtx
}

// Checkpoint stores step and state (nil keeps the document) and keeps the
// claim (a RetainClaim commit), so the handler goes on working in the same
// claim. A claim that is gone returns an error matching ErrClaimLost (and
// ErrStaleFence when the store refused the fence); the handler should then
// return, since nothing it does for this run can be committed any more.
func (j *Job) Checkpoint(ctx context.Context, step int, state json.RawMessage) error {
	fence, err := j.exec.Checkpoint(ctx, checkpointed(step, state).exec())
	if errors.Is(err, ErrStaleFence) {
		return fmt.Errorf("%w: %w", ErrClaimLost, err)
	}
	if err != nil {
		return err
	}
	j.State, j.Step, j.CheckpointSeq = fence.State, fence.Step, fence.Seq
	j.step = fence.Step
	return nil
}

// takeRead takes the claimed run from its claim call's read, or returns
// why it cannot. The read ran in the claim's own transaction, so it returns the
// leased version of every leased run; a run it lacks, or a row that does
// not match the lease, means the read is broken: the executor then hands
// the claim back without a checkpoint, so the run counts the attempt.
func (j *Job) takeRead(read *leaseRead) error {
	row, found := read.runs[j.RunID]
	var err error
	if !found {
		err = runNotFound(j.RunID)
	}
	if err == nil && (RunStatus(row.Status) != StatusRunning || row.ClaimToken == nil ||
		*row.ClaimToken != j.holder.Token || row.CheckpointSeq != j.CheckpointSeq) {
		err = fmt.Errorf("docket: the read of run %s does not match its lease", quoteID(j.RunID))
	}
	if err != nil {
		return err
	}
	j.link = extractTraceContext(row.TraceContext)
	j.State, j.Step, j.step = json.RawMessage(row.State), int(row.Step), int(row.Step)
	j.attempt = int(row.Attempt) + 1
	j.Attempt = j.attempt
	if row.MaxAttempts != nil {
		j.maxAttempts = int(*row.MaxAttempts)
	}
	j.MaxAttempts = j.maxAttempts
	return nil
}

// policy is the retry policy the job's failed attempt follows: its route's,
// with the run's own max attempts when it has one.
func (j *Job) policy() RetryPolicy {
	p := j.route.retry
	if j.maxAttempts > 0 {
		p.MaxAttempts = j.maxAttempts
	}
	return p
}

// CommitTx writes r, the handler's verdict, inside tx, the handler's own
// transaction, so the run settles exactly when the handler's own writes
// commit. Call it last: it stops the claim's heartbeat (the verdict's row
// lock would block it), and the handler must then commit or roll back tx
// and return before the claim TTL passes. When tx committed, the run is
// settled with r and the Result the handler returns is ignored; when tx
// rolled back, the Worker writes the returned Result as usual, fenced on the
// same claim, so the run is written exactly once either way. A second call,
// a refused fence (ErrStaleFence: the claim is gone) or an invalid r is an
// error and stages nothing.
func (j *Job) CommitTx(ctx context.Context, tx pgx.Tx, r Result) error {
	err := j.exec.CommitTx(ctx, tx, func(step int) executor.Plan[commitPlan] { return r.plan(step, j.attempt, j.policy()).exec() })
	switch {
	case errors.Is(err, executor.ErrStaged):
		return invalidArgument("run %s already has a verdict written in a transaction", quoteID(j.RunID))
	case errors.Is(err, errReleased):
		return fmt.Errorf("%w: run %s", ErrClaimLost, quoteID(j.RunID))
	}
	return err
}

// slots are a Worker's places for its jobs: a claim slot per handler and
// per run it may hold ahead, a handler slot per handler (which the
// executor takes, exec), and the early releases of claim slots whose
// verdict is still being written (Job.freeSlotEarly). Every job holds a
// claim slot from its claim to its end; the poll loop counts the claim
// slots freed, and a stopping Worker waits on the jobs.
type slots struct {
	// freed receives one value per freed claim slot; its capacity, the
	// claim slots, means a job never blocks on it.
	freed chan struct{}
	// exec are the handler slots and unstarted jobs the executor keeps:
	// one token per handler running, whose capacity, Concurrency, makes a
	// run claimed ahead wait for a handler to return.
	exec executor.Slots
	// committing holds one token per job whose claim slot was freed while
	// its verdict is still being written; its capacity (committingCapacity)
	// bounds them.
	committing chan struct{}
	// unstarted counts the jobs that have neither taken a handler slot nor
	// given their claim back (exec.Unstarted), so that a stopping Worker
	// can wait for the hand-backs of jobs that never started.
	unstarted sync.WaitGroup
	// ended receives a value, if none is pending, whenever a job ends.
	ended chan struct{}
	// written receives a value, if none is pending, when a job whose slot
	// was freed early ends: a claim call made in the meantime may have found
	// its run still holding a cap slot, so the poll loop tries again.
	written chan struct{}

	mu sync.Mutex
	// jobs are the jobs holding a slot.
	jobs map[*Job]struct{}
}

// newSlots returns the slots of a Worker of the resolved cfg, whose stop
// closes when it is asked to stop.
func newSlots(cfg WorkerConfig, stop <-chan struct{}) *slots {
	s := &slots{
		freed:      make(chan struct{}, cfg.claimSlots()),
		committing: make(chan struct{}, cfg.committingCapacity()),
		ended:      make(chan struct{}, 1),
		written:    make(chan struct{}, 1),
		jobs:       make(map[*Job]struct{}),
	}
	s.exec = executor.Slots{Handlers: make(chan struct{}, cfg.Concurrency), Stop: stop, Unstarted: &s.unstarted}
	return s
}

// join adds j, a job built but not yet started; it counts among the
// unstarted jobs until it begins.
func (s *slots) join(j *Job) {
	s.unstarted.Add(1)
	s.mu.Lock()
	s.jobs[j] = struct{}{}
	s.mu.Unlock()
}

// end frees the slot of j as j ends: its claim slot, or its committing
// token when the claim slot was freed before.
func (s *slots) end(j *Job) {
	s.mu.Lock()
	delete(s.jobs, j)
	s.mu.Unlock()
	if j.slotFreed {
		<-s.committing
		notify(s.written)
	} else {
		s.freed <- struct{}{}
	}
	notify(s.ended)
}

// inFlight returns the jobs holding a slot.
func (s *slots) inFlight() []*Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	jobs := make([]*Job, 0, len(s.jobs))
	for j := range s.jobs {
		jobs = append(jobs, j)
	}
	return jobs
}

// takeFreed counts the freed claim slots already signalled without
// waiting.
func (s *slots) takeFreed() int {
	n := 0
	for {
		select {
		case <-s.freed:
			n++
		default:
			return n
		}
	}
}

// awaitIdle waits until no job holds a slot, or ctx or stopCtx ends.
func (s *slots) awaitIdle(ctx, stopCtx context.Context) {
	for len(s.inFlight()) > 0 {
		select {
		case <-s.ended:
		case <-stopCtx.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}

// awaitBegun waits until every job has begun: taken a handler slot or
// given its claim back.
func (s *slots) awaitBegun() { s.unstarted.Wait() }

// notify sends on ch unless a value is already pending.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// isClosed reports whether ch, which only closes, is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
