package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/heartbeat"
	"github.com/docketrun/docket-go/internal/jobcompleter"
)

// Job is the holder side of one claim. Its builder sets the exported
// fields; then the job goroutine calls Run, which starts the claim's
// heartbeat, calls the handler and settles its verdict. The handler's
// Checkpoint and CommitTx run through it, and the heartbeat's timer and a
// stopping Worker (Surrender, HandBack, Cancel) reach it concurrently. Its
// mutex serializes every write under the claim.
type Job[V any] struct {
	// Config is the job's store, work, slots and timing.
	Config Config[V]
	// Fence is what the claim's next commit expects: the run as read,
	// until a commit moves it. Once the job is shared, its mutex guards
	// it.
	Fence Fence
	// ClaimedAt is when the claim was made, the first time it was known
	// held.
	ClaimedAt time.Time
	// EndHandler ends the handler's context with a cause.
	EndHandler context.CancelCauseFunc

	// held is the latest time (worker clock) the claim was known held.
	held held

	mu sync.Mutex
	// stopBeat ends the claim's heartbeat once it started.
	stopBeat context.CancelFunc
	prepared bool // the run was read and the handler may run
	released bool // the holder may commit nothing more
	// uncertain is set while an attempt of the pending commit failed
	// without an answer, so it may have committed all the same.
	uncertain bool
	// staged is the verdict the handler wrote in its own transaction.
	staged *Plan[V]
}

// held is a heartbeat.Held: the latest time a claim was known held, safe
// for concurrent use.
type held struct{ at atomic.Int64 }

// Confirm records that the claim was held at t.
func (h *held) Confirm(t time.Time) { h.at.Store(t.UnixNano()) }

// At is the latest time the claim was known held.
func (h *held) At() time.Time { return time.Unix(0, h.at.Load()) }

// Run runs the job on the job goroutine: it starts the claim's heartbeat,
// takes a handler slot unless the run could not be read (begin), calls the
// handler under its timeout (invoke), then settles the verdict once the
// heartbeat ended. handlerCtx is the handler's context, which EndHandler
// ends; io, which outlives cancellation, carries the job's own store calls.
func (j *Job[V]) Run(handlerCtx, io context.Context) {
	j.held.Confirm(j.ClaimedAt)
	defer j.EndHandler(nil)
	j.startHeartbeat(io)
	defer j.stopHeartbeat()
	if !j.begin(handlerCtx, io) {
		return
	}
	handlerCtx = j.Config.Reporter.Report(handlerCtx, Event[V]{Kind: HandlerStarted})
	began := time.Now()
	plan, handlerErr := j.invoke(handlerCtx)
	io = j.Config.Reporter.Report(io, Event[V]{Kind: HandlerEnded, Plan: plan, Err: handlerErr, Took: time.Since(began)})
	<-j.Config.Slots.Handlers
	j.stopHeartbeat()
	j.settleStaged(io, plan)
}

// startHeartbeat starts the claim's heartbeat on io, unless the claim was
// given up already.
func (j *Job[V]) startHeartbeat(io context.Context) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.released {
		return
	}
	ctx, stop := context.WithCancel(io)
	j.stopBeat = stop
	heartbeat.Start(ctx, heartbeat.Config{
		Interval: j.Config.HeartbeatInterval,
		TTL:      j.Config.ClaimTTL,
		Refresh:  j.Config.Store.Refresh,
		Lost: func(err error) bool {
			answer := j.Config.Store.Answer(err)
			return answer == Lost || answer == Fenced || answer == Cancelled
		},
		Held:      &j.held,
		OnLost:    j.claimLost,
		OnFailed:  func(ctx context.Context, err error) { j.failed(ctx, "docket worker heartbeat failed", err) },
		OnExpired: j.claimExpired,
	})
}

// stopHeartbeat ends the claim's heartbeat, if it started.
func (j *Job[V]) stopHeartbeat() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.endHeartbeatLocked()
}

// endHeartbeatLocked ends the claim's heartbeat, if it started. The caller
// holds j.mu.
func (j *Job[V]) endHeartbeatLocked() {
	if j.stopBeat != nil {
		j.stopBeat()
	}
}

// claimLost hears from the heartbeat that a refresh found the claim gone
// (err): the handler's context ends.
func (j *Job[V]) claimLost(ctx context.Context, err error) {
	j.mu.Lock()
	j.released = true
	j.mu.Unlock()
	j.Config.Reporter.Report(ctx, Event[V]{Kind: ClaimLost, Err: err})
	if j.Config.Store.Answer(err) == Cancelled {
		j.EndHandler(j.Config.Cancelled)
		return
	}
	j.EndHandler(j.Config.Lost)
}

// claimExpired hears from the heartbeat that the claim went unconfirmed
// for the claim TTL: the handler's context ends.
func (j *Job[V]) claimExpired(ctx context.Context) {
	j.Config.Reporter.Report(ctx, Event[V]{Kind: ClaimExpired})
	j.EndHandler(j.Config.Expired)
}

// begin takes a handler slot for the run read. A job that may not
// start its handler, since its context ended or the Worker stopped while it
// waited for a slot, gives its claim back unless a stopping Worker
// surrendered it first. Either way the job has begun (it leaves
// Slots.Unstarted) when begin returns. It reports whether the handler may
// run.
func (j *Job[V]) begin(handlerCtx, io context.Context) bool {
	defer j.Config.Slots.Unstarted.Done()
	if !j.prepare(io) {
		return false
	}
	if j.takeSlot(handlerCtx) {
		return true
	}
	if j.Surrender() {
		j.HandBack(io)
	}
	return false
}

// takeSlot takes a handler slot for a job that is about to call its
// handler. A job claimed ahead waits for one until its context ends or the
// Worker is asked to stop: a stopping Worker starts no run it holds ahead.
func (j *Job[V]) takeSlot(ctx context.Context) bool {
	s := j.Config.Slots
	select {
	case s.Handlers <- struct{}{}:
		return true
	default:
	}
	select {
	case s.Handlers <- struct{}{}:
	case <-ctx.Done():
		return false
	case <-s.Stop:
		return false
	}
	// A slot freed as the Worker stopped may have won the select.
	select {
	case <-s.Stop:
	default:
		if ctx.Err() == nil {
			return true
		}
	}
	<-s.Handlers
	return false
}

// invoke calls the handler on ctx under its timeout and returns the plan
// of its verdict and the error it reported; a panic is recovered as the
// Panicked plan.
func (j *Job[V]) invoke(ctx context.Context) (plan Plan[V], handlerErr error) {
	if j.Config.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, j.Config.Timeout, j.Config.TimedOut)
		defer cancel()
	}
	defer func() {
		if value := recover(); value != nil {
			plan, handlerErr = j.Config.Work.Panicked(ctx, value)
		}
	}()
	return j.Config.Work.Handle(ctx)
}

// Cancel ends the handler's context with cause.
func (j *Job[V]) Cancel(cause error) { j.EndHandler(cause) }

// failed reports a failed store call the job goes on after.
func (j *Job[V]) failed(ctx context.Context, msg string, err error) {
	j.Config.Reporter.Report(ctx, Event[V]{Kind: Failed, Msg: msg, Err: err})
}

// prepare lets the handler start on the run read, unless the claim was
// given up meanwhile; a read that failed (Config.Unreadable) hands the
// claim back without a checkpoint, so the run counts the attempt. It
// reports whether the handler may run.
func (j *Job[V]) prepare(io context.Context) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.released:
		return false
	case j.Config.Unreadable != nil:
		j.failed(io, "docket worker could not read a claimed run", j.Config.Unreadable)
		j.released = true
		ctx, cancel := context.WithTimeout(io, j.Config.CallTimeout)
		defer cancel()
		if _, err := j.Config.Store.Release(ctx); err != nil {
			j.failed(io, "docket worker could not release a claim; it will expire", err)
		}
		return false
	}
	j.prepared = true
	return true
}

// step is the step a commit keeps unless it sets one.
func (j *Job[V]) step() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.Fence.Step
}

// Checkpoint writes p alone, unless the claim was given up (Config.NotHeld),
// and returns the new fence.
func (j *Job[V]) Checkpoint(ctx context.Context, p Plan[V]) (Fence, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.released {
		return Fence{}, j.Config.NotHeld
	}
	return j.commitLocked(ctx, p)
}

// CommitTx writes p, the handler's verdict, in tx and stages it: the
// heartbeat stops (the verdict's row lock would block it) and settleStaged
// later finds out whether tx committed. A second call is ErrStaged, a claim
// already given up Config.NotHeld; neither stages anything.
func (j *Job[V]) CommitTx(ctx context.Context, tx pgx.Tx, p func(step int) Plan[V]) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.staged != nil:
		return ErrStaged
	case j.released:
		return j.Config.NotHeld
	}
	plan := p(j.Fence.Step)
	if err := j.Config.Store.CommitTx(ctx, tx, j.Fence, plan); err != nil {
		return err
	}
	j.endHeartbeatLocked()
	j.staged = &plan
	return nil
}

// settleStaged settles the job whose handler returned the verdict
// returned: when the handler wrote a verdict with CommitTx and the run
// shows it, its transaction committed and the job is done; otherwise the
// returned verdict is settled. A failed check counts as a rollback: the
// returned verdict's commit is fenced, so it cannot write twice.
func (j *Job[V]) settleStaged(io context.Context, returned Plan[V]) {
	j.mu.Lock()
	staged, fence := j.staged, j.Fence
	j.mu.Unlock()
	if staged == nil {
		j.settle(io, returned)
		return
	}
	ctx, cancel := context.WithTimeout(io, j.Config.CallTimeout)
	applied, err := j.Config.Store.Applied(ctx, fence, *staged)
	cancel()
	if err != nil {
		j.failed(io, "docket worker could not check a verdict written in the handler's transaction", err)
	}
	if !applied {
		j.settle(io, returned)
		return
	}
	j.mu.Lock()
	j.released = j.released || staged.Releases
	j.Fence.Seq++
	j.mu.Unlock()
	j.yielded(io, *staged)
	j.Config.Reporter.Report(io, Event[V]{Kind: Staged, Plan: *staged})
}

// settle writes p, the verdict of a returned handler. Writes that fail
// without an answer are retried with backoff while the claim can still be
// held, and no write is sent, nor waits for a connection, once it may have
// expired: another claim may hold the run by then, and the claim is left to
// expire so that it redoes the work. A verdict the store refuses as invalid
// is replaced by the Refused plan.
func (j *Job[V]) settle(io context.Context, p Plan[V]) {
	j.report(io, Event[V]{Kind: Writing, Plan: p})
	// replaced is set once p is the Refused plan, which is not replaced
	// again.
	replaced := false
	for failures := 1; ; failures++ {
		if failures == 1 && !time.Now().Before(j.expiry()) {
			// Nothing was sent: the claim is given up as if released.
			j.wrote(io, p, Dropped, fmt.Errorf("%w: %w", j.Config.NotHeld, errClaimMayHaveExpired))
			return
		}
		size, err := j.finish(io, p)
		j.report(io, Event[V]{Kind: Carried, Plan: p, Batch: size})
		if err == nil {
			j.wrote(io, p, Written, nil)
			j.yielded(io, p)
			return
		}
		if errors.Is(err, j.Config.NotHeld) {
			j.wrote(io, p, Dropped, err)
			return
		}
		switch answer := j.Config.Store.Answer(err); {
		case (answer == Fenced || answer == Cancelled) && j.appliedEarlier(io, p):
			j.yielded(io, p)
			j.wrote(io, p, AppliedEarlier, nil)
			return
		case answer == Cancelled:
			j.wrote(io, p, CancelledByOperator, err)
			return
		case answer == Fenced:
			j.wrote(io, p, FencedOut, err)
			return
		case answer == Invalid && !replaced:
			j.wrote(io, p, Refused, err)
			p, replaced = j.Config.Work.Refused(j.step(), err), true
			j.report(io, Event[V]{Kind: Writing, Plan: p})
			continue
		}
		if !time.Now().Before(j.expiry()) {
			j.wrote(io, p, GaveUp, err)
			return
		}
		if !j.Config.Sleep(io, j.Config.Backoff(failures)) {
			j.wrote(io, p, Interrupted, err)
			return
		}
	}
}

// report reports e.
func (j *Job[V]) report(ctx context.Context, e Event[V]) { j.Config.Reporter.Report(ctx, e) }

// wrote reports that the write of p ended as e, err its error.
func (j *Job[V]) wrote(ctx context.Context, p Plan[V], e Ending, err error) {
	j.report(ctx, Event[V]{Kind: Wrote, Plan: p, Ending: e, Err: err})
}

// errClaimMayHaveExpired is why a verdict was dropped unsent: the claim may
// have expired before it could be sent.
var errClaimMayHaveExpired = errors.New("the claim may have expired, so no verdict write was sent")

// expiry is when the claim may have expired: ClaimTTL after the latest time
// it was known held, taken when the write or refresh that showed it was
// sent.
func (j *Job[V]) expiry() time.Time {
	return j.held.At().Add(j.Config.ClaimTTL)
}

// yielded tells the domain's Workers when p, which took effect, made the
// run due now.
func (j *Job[V]) yielded(io context.Context, p Plan[V]) {
	if p.Yields {
		j.report(io, Event[V]{Kind: Yielded})
	}
}

// appliedEarlier reports whether the commit of p, which the fence refused,
// was committed by an earlier attempt whose answer was lost. Only a job
// that had such an attempt asks the store; a failed check counts as not
// applied.
func (j *Job[V]) appliedEarlier(io context.Context, p Plan[V]) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.uncertain {
		return false
	}
	ctx, cancel := context.WithTimeout(io, j.Config.CallTimeout)
	defer cancel()
	applied, err := j.Config.Store.Applied(ctx, j.Fence, p)
	if err != nil {
		j.failed(io, "docket worker could not check whether its commit was applied", err)
		return false
	}
	return applied
}

// finish is one write of a returned handler's verdict: a Shared one is
// written together with other jobs' verdicts, and alone only when that
// statement failed as a whole. It returns how many commits the
// statement that wrote p carried (0 when none was sent).
func (j *Job[V]) finish(ctx context.Context, p Plan[V]) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.released {
		return 0, j.Config.NotHeld
	}
	if !p.Releases || !p.Shared {
		_, err := j.commitLocked(ctx, p)
		return 1, err
	}
	sent := time.Now()
	fence, size, err := j.Config.Store.CommitGrouped(ctx, j.Fence, p)
	if errors.Is(err, jobcompleter.ErrFlushFailed) {
		// The statement may have committed before its answer was lost.
		j.uncertain = true
		_, err = j.commitLocked(ctx, p)
		return 1, err
	}
	j.committed(p, sent, fence, err)
	return size, err
}

// commitLocked writes p alone, fenced on the claim, within the call
// timeout and never past the claim's expiry: a write still waiting for a
// connection or an answer then is abandoned, its outcome unknown. The
// caller holds j.mu.
func (j *Job[V]) commitLocked(ctx context.Context, p Plan[V]) (Fence, error) {
	sent := time.Now()
	deadline := sent.Add(j.Config.CallTimeout)
	if expiry := j.expiry(); expiry.Before(deadline) {
		deadline = expiry
	}
	callCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fence, err := j.Config.Store.Commit(callCtx, j.Fence, p)
	j.committed(p, sent, fence, err)
	return fence, err
}

// committed records the outcome of a write of p sent at sent. A fence
// refusal means the claim is gone: the handler's context is cancelled and
// no further write is tried. Any other failure but a refused argument
// leaves it open whether the statement committed. The caller holds j.mu.
func (j *Job[V]) committed(p Plan[V], sent time.Time, fence Fence, err error) {
	if err == nil {
		j.Fence = fence
		j.held.Confirm(sent)
		j.released = j.released || p.Releases
		j.uncertain = false
		return
	}
	switch j.Config.Store.Answer(err) {
	case Fenced, Cancelled:
		j.released = true
		j.EndHandler(j.Config.FencedOut)
	case Unanswered:
		j.uncertain = true
	}
}

// Surrender takes the claim away from the handler for a stopping Worker:
// from now on the handler can commit nothing, and the heartbeat ends. It
// reports whether the claim was still held, which HandBack must then give
// back.
func (j *Job[V]) Surrender() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.endHeartbeatLocked()
	if j.released {
		return false
	}
	j.released = true
	return true
}

// HandBack gives a surrendered claim back: the Stopped plan, which keeps
// the admission, once the run was read for the handler (whether or not it
// started), a plain release before that. It reports the outcome
// (HandedBack): whether the store accepted it, and the write's error; a
// fence refusal of the Stopped plan means a newer holder already owns the
// run, which needs nothing more.
func (j *Job[V]) HandBack(io context.Context) {
	released, checkpointed, plan, err := j.handBack(io)
	j.report(io, Event[V]{Kind: HandedBack, Plan: plan, Released: released, Checkpointed: checkpointed, Err: err})
}

// handBack is HandBack's write: whether the store accepted it, whether it
// committed plan, and its failure.
func (j *Job[V]) handBack(io context.Context) (released, checkpointed bool, plan Plan[V], err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.prepared {
		ctx, cancel := context.WithTimeout(io, j.Config.CallTimeout)
		defer cancel()
		released, err = j.Config.Store.Release(ctx)
		return released, false, plan, err
	}
	plan = j.Config.Work.Stopped(j.Fence.Step)
	_, err = j.commitLocked(io, plan)
	return err == nil, true, plan, err
}
