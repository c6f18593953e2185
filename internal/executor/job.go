package executor

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/heartbeat"
	"github.com/docketrun/docket-go/internal/jobcompleter"
)

// Job is the holder side of one claim. The job goroutine calls Run, which
// reads the run, calls the handler and settles its verdict; the handler's
// Checkpoint and CommitTx run through it, and the heartbeat's timer and a
// stopping Worker (Surrender, HandBack, Cancel) reach it concurrently. Its
// mutex serializes every write under the claim.
type Job[P Plan] struct {
	cfg    Config[P]
	cancel context.CancelCauseFunc
	beat   *heartbeat.Heartbeat
	// held is the latest time (worker clock) the claim was known held.
	held heartbeat.Held

	mu       sync.Mutex
	fence    Fence
	prepared bool // the run was read and the handler may run
	released bool // the holder may commit nothing more
	// uncertain is set while an attempt of the pending commit failed
	// without an answer, so it may have committed all the same.
	uncertain bool
	// staged is the verdict the handler wrote in its own transaction.
	staged *P
}

// New returns the executor of a claim made at claimedAt whose first commit
// expects fence (the step of the run as read); cancel ends the handler's
// context. Run runs it.
func New[P Plan](cfg Config[P], fence Fence, claimedAt time.Time, cancel context.CancelCauseFunc) *Job[P] {
	j := &Job[P]{cfg: cfg, cancel: cancel, fence: fence}
	j.held.Confirm(claimedAt)
	j.beat = heartbeat.New(heartbeat.Config{
		Interval: cfg.HeartbeatInterval,
		TTL:      cfg.ClaimTTL,
		Refresh:  cfg.Store.Refresh,
		Lost: func(err error) bool {
			answer := cfg.Store.Answer(err)
			return answer == Lost || answer == Fenced || answer == Cancelled
		},
		Held: &j.held,
		OnLost: func(ctx context.Context, err error) {
			j.mu.Lock()
			j.released = true
			j.mu.Unlock()
			j.cfg.Reporter.Report(ctx, Event[P]{Kind: ClaimLost, Err: err})
			if cfg.Store.Answer(err) == Cancelled {
				j.cancel(cfg.Cancelled)
				return
			}
			j.cancel(cfg.Lost)
		},
		OnFailed: func(ctx context.Context, err error) { j.failed(ctx, "docket worker heartbeat failed", err) },
		OnExpired: func(ctx context.Context) {
			j.cfg.Reporter.Report(ctx, Event[P]{Kind: ClaimExpired})
			j.cancel(cfg.Expired)
		},
	})
	return j
}

// Run runs the job on the job goroutine: it starts the claim's heartbeat,
// takes a handler slot unless the run could not be read (begin), calls the handler under
// its timeout (invoke), then settles the verdict once the heartbeat ended.
// handlerCtx is the handler's context, which New's cancel ends; io, which
// outlives cancellation, carries the job's own store calls.
func (j *Job[P]) Run(handlerCtx, io context.Context) {
	j.beat.Start(io)
	defer j.cancel(nil)
	defer j.beat.Stop()
	if !j.begin(handlerCtx, io) {
		return
	}
	handlerCtx = j.cfg.Reporter.Report(handlerCtx, Event[P]{Kind: HandlerStarted})
	began := time.Now()
	plan, handlerErr := j.invoke(handlerCtx)
	io = j.cfg.Reporter.Report(io, Event[P]{Kind: HandlerEnded, Plan: plan, Err: handlerErr, Took: time.Since(began)})
	j.cfg.Slot.Handled()
	j.beat.Stop()
	j.settleStaged(io, plan)
}

// begin takes a handler slot for the run read. A job that may not
// start its handler, since its context ended or the Worker stopped while it
// waited for a slot, gives its claim back unless a stopping Worker
// surrendered it first. Either way the job has begun (Slot.Begun) when
// begin returns. It reports whether the handler may run.
func (j *Job[P]) begin(handlerCtx, io context.Context) bool {
	defer j.cfg.Slot.Begun()
	if !j.prepare(io) {
		return false
	}
	if j.cfg.Slot.Take(handlerCtx) {
		return true
	}
	if j.Surrender() {
		j.HandBack(io)
	}
	return false
}

// invoke calls the handler on ctx under its timeout and returns the plan
// of its verdict and the error it reported; a panic is recovered as the
// Panicked plan.
func (j *Job[P]) invoke(ctx context.Context) (plan P, handlerErr error) {
	if timeout, cause := j.cfg.Work.Timeout(); timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, cause)
		defer cancel()
	}
	defer func() {
		if value := recover(); value != nil {
			plan, handlerErr = j.cfg.Work.Panicked(ctx, j.Step(), value)
		}
	}()
	return j.cfg.Work.Handle(ctx)
}

// Cancel ends the handler's context with cause.
func (j *Job[P]) Cancel(cause error) { j.cancel(cause) }

// failed reports a failed store call the job goes on after.
func (j *Job[P]) failed(ctx context.Context, msg string, err error) {
	j.cfg.Reporter.Report(ctx, Event[P]{Kind: Failed, Msg: msg, Err: err})
}

// prepare lets the handler start on the run read, unless the claim was
// given up meanwhile; a read that failed (Config.Unreadable) hands the
// claim back without a checkpoint, so the run counts the attempt. It
// reports whether the handler may run.
func (j *Job[P]) prepare(io context.Context) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.released:
		return false
	case j.cfg.Unreadable != nil:
		j.failed(io, "docket worker could not read a claimed run", j.cfg.Unreadable)
		j.released = true
		ctx, cancel := context.WithTimeout(io, j.cfg.CallTimeout)
		defer cancel()
		if _, err := j.cfg.Store.Release(ctx); err != nil {
			j.failed(io, "docket worker could not release a claim; it will expire", err)
		}
		return false
	}
	j.prepared = true
	return true
}

// Step is the step a commit keeps unless it sets one.
func (j *Job[P]) Step() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.fence.Step
}

// Checkpoint writes p alone, unless the claim was given up (Config.NotHeld),
// and returns the new fence.
func (j *Job[P]) Checkpoint(ctx context.Context, p P) (Fence, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.released {
		return Fence{}, j.cfg.NotHeld
	}
	return j.commitLocked(ctx, p)
}

// CommitTx writes p, the handler's verdict, in tx and stages it: the
// heartbeat stops (the verdict's row lock would block it) and settleStaged
// later finds out whether tx committed. A second call is ErrStaged, a claim
// already given up Config.NotHeld; neither stages anything.
func (j *Job[P]) CommitTx(ctx context.Context, tx pgx.Tx, p func(step int) P) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.staged != nil:
		return ErrStaged
	case j.released:
		return j.cfg.NotHeld
	}
	plan := p(j.fence.Step)
	if err := j.cfg.Store.CommitTx(ctx, tx, j.fence, plan); err != nil {
		return err
	}
	j.beat.Stop()
	j.staged = &plan
	return nil
}

// settleStaged settles the job whose handler returned the verdict
// returned: when the handler wrote a verdict with CommitTx and the run
// shows it, its transaction committed and the job is done; otherwise the
// returned verdict is settled. A failed check counts as a rollback: the
// returned verdict's commit is fenced, so it cannot write twice.
func (j *Job[P]) settleStaged(io context.Context, returned P) {
	j.mu.Lock()
	staged, fence := j.staged, j.fence
	j.mu.Unlock()
	if staged == nil {
		j.settle(io, returned)
		return
	}
	ctx, cancel := context.WithTimeout(io, j.cfg.CallTimeout)
	applied, err := j.cfg.Store.Applied(ctx, fence, *staged)
	cancel()
	if err != nil {
		j.failed(io, "docket worker could not check a verdict written in the handler's transaction", err)
	}
	if !applied {
		j.settle(io, returned)
		return
	}
	j.mu.Lock()
	j.released = j.released || (*staged).ReleasesClaim()
	j.fence.Seq++
	j.mu.Unlock()
	j.yielded(io, *staged)
	j.cfg.Reporter.Report(io, Event[P]{Kind: Staged, Plan: *staged})
}

// settle writes p, the verdict of a returned handler. Writes that fail
// without an answer are retried with backoff while the claim can still be
// held, and no write is sent, nor waits for a connection, once it may have
// expired: another claim may hold the run by then, and the claim is left to
// expire so that it redoes the work. A verdict the store refuses as invalid
// is replaced by the Refused plan.
func (j *Job[P]) settle(io context.Context, p P) {
	j.report(io, Event[P]{Kind: Writing, Plan: p})
	// replaced is set once p is the Refused plan, which is not replaced
	// again.
	replaced := false
	for failures := 1; ; failures++ {
		if failures == 1 && !time.Now().Before(j.expiry()) {
			// Nothing was sent: the claim is given up as if released.
			j.wrote(io, p, Dropped, fmt.Errorf("%w: %w", j.cfg.NotHeld, errClaimMayHaveExpired))
			return
		}
		size, err := j.finish(io, p)
		j.report(io, Event[P]{Kind: Carried, Plan: p, Batch: size})
		if err == nil {
			j.wrote(io, p, Written, nil)
			j.yielded(io, p)
			return
		}
		if errors.Is(err, j.cfg.NotHeld) {
			j.wrote(io, p, Dropped, err)
			return
		}
		switch answer := j.cfg.Store.Answer(err); {
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
			p, replaced = j.cfg.Work.Refused(j.Step(), err), true
			j.report(io, Event[P]{Kind: Writing, Plan: p})
			continue
		}
		if !time.Now().Before(j.expiry()) {
			j.wrote(io, p, GaveUp, err)
			return
		}
		if !j.cfg.Sleep(io, j.cfg.Backoff(failures)) {
			j.wrote(io, p, Interrupted, err)
			return
		}
	}
}

// report reports e.
func (j *Job[P]) report(ctx context.Context, e Event[P]) { j.cfg.Reporter.Report(ctx, e) }

// wrote reports that the write of p ended as e, err its error.
func (j *Job[P]) wrote(ctx context.Context, p P, e Ending, err error) {
	j.report(ctx, Event[P]{Kind: Wrote, Plan: p, Ending: e, Err: err})
}

// errClaimMayHaveExpired is why a verdict was dropped unsent: the claim may
// have expired before it could be sent.
var errClaimMayHaveExpired = errors.New("the claim may have expired, so no verdict write was sent")

// expiry is when the claim may have expired: ClaimTTL after the latest time
// it was known held, taken when the write or refresh that showed it was
// sent.
func (j *Job[P]) expiry() time.Time {
	return j.held.At().Add(j.cfg.ClaimTTL)
}

// yielded tells the domain's Workers when p, which took effect, made the
// run due now.
func (j *Job[P]) yielded(io context.Context, p P) {
	if p.Yields() {
		j.report(io, Event[P]{Kind: Yielded})
	}
}

// appliedEarlier reports whether the commit of p, which the fence refused,
// was committed by an earlier attempt whose answer was lost. Only a job
// that had such an attempt asks the store; a failed check counts as not
// applied.
func (j *Job[P]) appliedEarlier(io context.Context, p P) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.uncertain {
		return false
	}
	ctx, cancel := context.WithTimeout(io, j.cfg.CallTimeout)
	defer cancel()
	applied, err := j.cfg.Store.Applied(ctx, j.fence, p)
	if err != nil {
		j.failed(io, "docket worker could not check whether its commit was applied", err)
		return false
	}
	return applied
}

// finish is one write of a returned handler's verdict: one that can share
// a statement is written together with other jobs' verdicts, and alone only
// when that statement failed as a whole. It returns how many commits the
// statement that wrote p carried (0 when none was sent).
func (j *Job[P]) finish(ctx context.Context, p P) (int, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.released {
		return 0, j.cfg.NotHeld
	}
	if !p.ReleasesClaim() {
		_, err := j.commitLocked(ctx, p)
		return 1, err
	}
	sent := time.Now()
	fence, size, err := j.cfg.Store.CommitGrouped(ctx, j.fence, p)
	if errors.Is(err, jobcompleter.ErrAlone) {
		_, err := j.commitLocked(ctx, p)
		return 1, err
	}
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
func (j *Job[P]) commitLocked(ctx context.Context, p P) (Fence, error) {
	sent := time.Now()
	deadline := sent.Add(j.cfg.CallTimeout)
	if expiry := j.expiry(); expiry.Before(deadline) {
		deadline = expiry
	}
	callCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fence, err := j.cfg.Store.Commit(callCtx, j.fence, p)
	j.committed(p, sent, fence, err)
	return fence, err
}

// committed records the outcome of a write of p sent at sent. A fence
// refusal means the claim is gone: the handler's context is cancelled and
// no further write is tried. Any other failure but a refused argument
// leaves it open whether the statement committed. The caller holds j.mu.
func (j *Job[P]) committed(p P, sent time.Time, fence Fence, err error) {
	if err == nil {
		j.fence = fence
		j.held.Confirm(sent)
		j.released = j.released || p.ReleasesClaim()
		j.uncertain = false
		return
	}
	switch j.cfg.Store.Answer(err) {
	case Fenced, Cancelled:
		j.released = true
		j.cancel(j.cfg.FencedOut)
	case Unanswered:
		j.uncertain = true
	}
}

// Surrender takes the claim away from the handler for a stopping Worker:
// from now on the handler can commit nothing, and the heartbeat ends. It
// reports whether the claim was still held, which HandBack must then give
// back.
func (j *Job[P]) Surrender() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.beat.Stop()
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
func (j *Job[P]) HandBack(io context.Context) {
	released, checkpointed, plan, err := j.handBack(io)
	j.report(io, Event[P]{Kind: HandedBack, Plan: plan, Released: released, Checkpointed: checkpointed, Err: err})
}

// handBack is HandBack's write: whether the store accepted it, whether it
// committed plan, and its failure.
func (j *Job[P]) handBack(io context.Context) (released, checkpointed bool, plan P, err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.prepared {
		ctx, cancel := context.WithTimeout(io, j.cfg.CallTimeout)
		defer cancel()
		released, err = j.cfg.Store.Release(ctx)
		return released, false, plan, err
	}
	plan = j.cfg.Work.Stopped(j.fence.Step)
	_, err = j.commitLocked(io, plan)
	return err == nil, true, plan, err
}
