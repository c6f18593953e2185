package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/executor"
	"github.com/docketrun/docket-go/internal/jobcompleter"
)

// jobSeam is what package executor needs of one job, besides its slot
// (jobSlot): its claim's store calls (executor.Store), its handler and
// verdict plans (executor.Work) and the worker's logs, metrics, spans and
// events (executor.Reporter).
type jobSeam struct {
	j *Job
	// handlerSpan and commitSpan are the job's docket.handler span and the
	// docket.commit span of the write in progress, and batch the size of
	// the statement that last carried it; only the job goroutine reports
	// the events that touch them.
	handlerSpan, commitSpan *span
	batch                   int
}

var (
	_ executor.Store[commitPlan]    = (*jobSeam)(nil)
	_ executor.Work[commitPlan]     = (*jobSeam)(nil)
	_ executor.Reporter[commitPlan] = (*jobSeam)(nil)
)

// ReleasesClaim and Yields make a commitPlan an executor.Plan.

// ReleasesClaim reports whether committing p ends the holder's claim.
func (p commitPlan) ReleasesClaim() bool { return p.schedule.kind != "retain" }

// Yields reports whether p makes the run due now with its admission kept.
func (p commitPlan) Yields() bool { return p.schedule.kind == "immediate" }

// request is the commit request of p fenced on f.
func (s *jobSeam) request(f executor.Fence, p commitPlan) CommitRequest {
	return CommitRequest{
		Holder:         s.j.holder,
		ExpectedSeq:    f.Seq,
		Step:           p.step,
		State:          p.state,
		CheckpointType: p.checkpointType,
		Disposition:    p.schedule,
		Attempt:        p.attempt,
		Failure:        p.failure,
	}
}

// Commit implements executor.Store.
func (s *jobSeam) Commit(ctx context.Context, f executor.Fence, p commitPlan) (executor.Fence, error) {
	run, err := s.j.worker.client.Commit(ctx, s.request(f, p))
	return executor.Fence{Seq: run.CheckpointSeq, Step: run.Step, State: run.State}, err
}

// CommitGrouped implements executor.Store: the verdict goes to the
// worker's completer, and the job's slot is freed once it joins a
// statement, when the worker allows.
func (s *jobSeam) CommitGrouped(ctx context.Context, f executor.Fence, p commitPlan) (executor.Fence, int, error) {
	w := s.j.worker
	req := s.request(f, p)
	scopeKey, err := w.client.holderKey(req.Holder)
	if err != nil {
		return executor.Fence{}, 0, err
	}
	done, size, err := w.completer.Complete(ctx, s.j.member, scopedCommit{req: req, scopeKey: scopeKey},
		s.j.slot.releaseEarly)
	return executor.Fence{Seq: done.seq, Step: done.step}, size, err
}

// verdictCompleter writes the verdicts of a worker's jobs that finish
// together in one CommitRuns statement (package jobcompleter), each still
// fenced on its own claim.
type verdictCompleter = jobcompleter.Completer[scopedCommit, committedSeq]

// maxAdaptiveVerdictWait bounds how long a verdict waits for others when
// the worker decides the wait itself (WorkerTuning.VerdictBatchWait zero).
const maxAdaptiveVerdictWait = 20 * time.Millisecond

// newCompleter returns the completer of a worker of client and resolved
// cfg: a lingering one when WorkerTuning.VerdictBatchWait is set, else one
// that decides from what it measures. Its statement waits for the verdicts
// of other claim calls as long as a CommitRuns statement takes, at most
// maxAdaptiveVerdictWait and half the claim's unrefreshed window, while
// verdicts arrive closer together than that; otherwise it waits for its own
// claim call's jobs, at most jobcompleter.CohortWait. A waiting verdict's
// run holds its tenant's admission, so the wait stays as short as the
// statement it saves.
func newCompleter(client *Client, cfg WorkerConfig) *verdictCompleter {
	maxWait := min(maxAdaptiveVerdictWait, (cfg.ClaimTTL-cfg.HeartbeatInterval)/2)
	return jobcompleter.New(jobcompleter.Config[scopedCommit, committedSeq]{
		Flush:         client.commitRuns,
		CallTimeout:   workerCallTimeout,
		Batchable:     scopedCommit.batchable,
		BatchWait:     cfg.Tuning.VerdictBatchWait,
		MaxBatch:      MaxVerdictBatch,
		LingerFor:     func(statement time.Duration) time.Duration { return min(statement, maxWait) },
		AdaptiveBatch: cfg.committingCapacity(),
	})
}

// CommitTx implements executor.Store.
func (s *jobSeam) CommitTx(ctx context.Context, tx pgx.Tx, f executor.Fence, p commitPlan) error {
	_, err := s.j.worker.client.CommitTx(ctx, tx, s.request(f, p))
	return err
}

// Applied implements executor.Store.
func (s *jobSeam) Applied(ctx context.Context, f executor.Fence, p commitPlan) (bool, error) {
	return s.j.worker.client.commitApplied(ctx, s.request(f, p))
}

// Release implements executor.Store.
func (s *jobSeam) Release(ctx context.Context) (bool, error) {
	return s.j.worker.client.ReleaseClaim(ctx, s.j.holder)
}

// Refresh implements executor.Store.
func (s *jobSeam) Refresh(ctx context.Context) error {
	_, err := s.j.worker.client.RefreshClaim(ctx, s.j.holder)
	return err
}

// Answer implements executor.Store.
func (*jobSeam) Answer(err error) executor.Answer { return writeAnswer(err) }

// writeAnswer classifies err, the error of a write under a claim, for the
// executor and for the verdict events (verdictOutcome).
func writeAnswer(err error) executor.Answer {
	switch {
	case errors.Is(err, ErrRunCancelled):
		return executor.Cancelled
	case errors.Is(err, ErrStaleFence), errors.Is(err, ErrNotFound):
		return executor.Fenced
	case errors.Is(err, ErrInvalidArgument):
		return executor.Invalid
	case errors.Is(err, ErrClaimLost):
		return executor.Lost
	}
	return executor.Unanswered
}

// Timeout implements executor.Work: the route's timeout.
func (s *jobSeam) Timeout() (time.Duration, error) {
	timeout := s.j.route.timeout
	if timeout <= 0 {
		return 0, nil
	}
	return timeout, &HandlerTimeoutError{Timeout: timeout}
}

// Handle implements executor.Work: it calls the handler through its
// middleware and plans the commit of its verdict; a handler that returned
// after its timeout passed failed its attempt, whatever it returned. The
// error is the one the handler reported: Fail's or a Retry...Error's own
// (nil for Fail(nil)), the zero Result or the timeout. The logs above debug
// level name only the verdict, never the error text.
func (s *jobSeam) Handle(ctx context.Context) (commitPlan, error) {
	j, w := s.j, s.j.worker
	result := j.route.handle(ctx, j)
	if timeout, ok := errors.AsType[*HandlerTimeoutError](context.Cause(ctx)); ok {
		plan := timedOut(j.exec.Step(), j.attempt, j.policy(), timeout)
		w.logger.WarnContext(ctx, "docket worker handler outlived its timeout", "result", plan.checkpointType,
			"timeout", timeout.Timeout)
		return plan, timeout
	}
	plan := result.plan(j.exec.Step(), j.attempt, j.policy())
	switch {
	case result.kind == resultMissing:
		w.logger.WarnContext(ctx, "docket worker handler returned the zero Result", "result", plan.checkpointType)
		return plan, errZeroResult
	case result.err != nil:
		w.debug(ctx, "docket worker handler attempt failed", j.RunID, "result", plan.checkpointType,
			"error", result.err.Error())
		return plan, result.err
	}
	return plan, nil
}

// Panicked implements executor.Work: a panic is a failed attempt, whose
// error entry keeps the handler's innermost frames (panicFrames); no log
// or span carries the frames.
func (s *jobSeam) Panicked(ctx context.Context, step int, value any) (commitPlan, error) {
	j, w := s.j, s.j.worker
	frames, omitted := panicFrames()
	plan := panicked(step, j.attempt, j.policy(), panicText(value, frames, omitted))
	w.logger.ErrorContext(ctx, "docket worker handler panicked", "result", plan.checkpointType)
	w.debug(ctx, "docket worker handler panic", j.RunID, "panic", fmt.Sprint(value))
	return plan, fmt.Errorf("docket: handler panic: %v", value)
}

// Refused implements executor.Work.
func (*jobSeam) Refused(step int, err error) commitPlan { return refused(step, err) }

// Stopped implements executor.Work.
func (*jobSeam) Stopped(step int) commitPlan { return stopped(step) }

// Report implements executor.Reporter.
func (s *jobSeam) Report(ctx context.Context, e executor.Event[commitPlan]) context.Context {
	j, w := s.j, s.j.worker
	switch e.Kind {
	case executor.HandlerStarted:
		w.debug(ctx, "docket worker run started", j.RunID, "class", string(j.Class))
		w.emit(WorkerEvent{Kind: EventHandlerStarted, RunID: j.RunID, Scope: j.Scope})
		ctx, s.handlerSpan = j.startHandlerSpan(ctx)
	case executor.HandlerEnded:
		w.ahead.observeHandler(e.Took)
		endHandlerSpan(s.handlerSpan, e.Plan, e.Err)
		return s.handlerSpan.parentOf(ctx)
	case executor.Writing:
		s.commitSpan, s.batch = j.startCommitSpan(ctx, e.Plan), 0
	case executor.Carried:
		s.batch = e.Batch
		s.commitSpan.set(spanAttrBatchSize.Int(e.Batch))
	case executor.Wrote:
		s.wrote(ctx, e.Plan, e.Ending, e.Err)
	case executor.Staged:
		w.debug(ctx, "docket worker run settled in the handler's transaction", j.RunID, "result", e.Plan.checkpointType)
		j.noteDue(e.Plan)
		j.verdict(e.Plan, 0, nil)
	case executor.HandedBack:
		failure := e.Err
		if e.Checkpointed {
			// A hand-back is written alone.
			j.verdict(e.Plan, 1, e.Err)
			if answer := writeAnswer(e.Err); answer == executor.Fenced || answer == executor.Cancelled {
				// A newer holder owns the run: nothing more is needed.
				failure = nil
			}
		}
		w.handedBackClaim(ctx, j, e.Released, failure)
	case executor.Yielded:
		w.announceYield(ctx)
	case executor.Failed:
		w.failure(ctx, e.Msg, j.RunID, e.Err)
	case executor.ClaimLost:
		w.logger.InfoContext(ctx, "docket worker lost a claim; cancelling its handler")
		w.debug(ctx, "docket worker claim lost", j.RunID)
	case executor.ClaimExpired:
		w.logger.WarnContext(ctx, "docket worker presumes a claim lost after a ClaimTTL without refresh; cancelling its handler")
	}
	return ctx
}

// wrote logs and counts how the write of plan ended (e, err its error),
// ends its docket.commit span and reports the verdict event.
func (s *jobSeam) wrote(ctx context.Context, plan commitPlan, e executor.Ending, err error) {
	j, w, kind := s.j, s.j.worker, plan.checkpointType
	switch e {
	case executor.Written:
		w.debug(ctx, "docket worker run settled", j.RunID, "result", kind)
		j.noteDue(plan)
	case executor.Dropped:
		w.debug(ctx, "docket worker dropped a verdict; the claim was already given up", j.RunID, "result", kind)
	case executor.AppliedEarlier:
		w.client.telemetry.fenced(ctx, fenceAlreadyApplied)
		w.debug(ctx, "docket worker run settled; its commit was already applied", j.RunID, "result", kind)
		j.noteDue(plan)
	case executor.CancelledByOperator:
		w.client.telemetry.fenced(ctx, fenceCancelled)
		w.logger.InfoContext(ctx, "docket worker dropped a verdict; an operator cancelled the run", "result", kind)
	case executor.FencedOut:
		w.client.telemetry.fenced(ctx, fenceNewerHolder)
		w.logger.InfoContext(ctx, "docket worker commit refused by the claim fence; a newer holder owns the run", "result", kind)
		w.debug(ctx, "docket worker commit fenced out", j.RunID, "result", kind)
	case executor.Refused:
		w.logger.WarnContext(ctx, "docket worker result refused as invalid; failing the run", "result", kind)
		w.debug(ctx, "docket worker invalid result", j.RunID, "error", err.Error())
	case executor.GaveUp:
		w.failure(ctx, "docket worker gave up committing; the claim will expire", j.RunID, err)
	}
	j.settled(s.commitSpan, plan, s.batch, err)
}

// noteDue tells the worker when the run is due again after the written
// plan, if the plan released it until a time (a backoff, RetryAt,
// RetryAfter, Snooze).
func (j *Job) noteDue(p commitPlan) {
	switch p.schedule.kind {
	case "after":
		j.worker.noteDue(time.Now().Add(p.schedule.delay))
	case "at":
		j.worker.noteDue(p.schedule.at)
	}
}

// verdict reports the end of the write of plan, carried by a statement of
// batch verdicts; err is its error.
func (j *Job) verdict(plan commitPlan, batch int, err error) {
	if j.worker.cfg.OnEvent == nil {
		return
	}
	j.worker.emit(WorkerEvent{Kind: EventVerdict, RunID: j.RunID, Scope: j.Scope,
		Verdict: plan.checkpointType, Outcome: verdictOutcome(err), Batch: batch, Err: err})
}
