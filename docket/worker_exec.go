package docket

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/executor"
	"github.com/docketrun/docket-go/internal/jobcompleter"
)

// jobSeam is what package executor needs of one job, besides its slots:
// its claim's store calls (executor.Store, here), its handler and verdict
// plans (executor.Work, worker_handle.go) and the worker's logs, metrics,
// spans and events (executor.Reporter, here).
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

// request is the commit request of p fenced on f.
func (s *jobSeam) request(f executor.Fence, p executor.Plan[commitPlan]) CommitRequest {
	v := p.Verdict
	return CommitRequest{
		Holder:         s.j.holder,
		ExpectedSeq:    f.Seq,
		Step:           v.step,
		State:          v.state,
		CheckpointType: v.checkpointType,
		Disposition:    v.schedule,
		Attempt:        v.attempt,
		Failure:        v.failure,
	}
}

// Commit implements executor.Store.
func (s *jobSeam) Commit(ctx context.Context, f executor.Fence, p executor.Plan[commitPlan]) (executor.Fence, error) {
	run, err := s.j.worker.client.Commit(ctx, s.request(f, p))
	return executor.Fence{Seq: run.CheckpointSeq, Step: run.Step, State: run.State}, err
}

// CommitGrouped implements executor.Store: the verdict frees the job's
// claim slot, when the worker allows, and goes to the worker's completer.
func (s *jobSeam) CommitGrouped(ctx context.Context, f executor.Fence, p executor.Plan[commitPlan]) (executor.Fence, int, error) {
	j := s.j
	req := s.request(f, p)
	scopeKey, err := j.worker.client.holderKey(req.Holder)
	if err != nil {
		return executor.Fence{}, 0, err
	}
	j.freeSlotEarly()
	done, size, err := j.worker.completer.Complete(ctx, j.member, scopedCommit{req: req, scopeKey: scopeKey}, j.worker.shortOfWork)
	return executor.Fence{Seq: done.seq, Step: done.step}, size, err
}

// freeSlotEarly frees the job's claim slot before its verdict is written,
// unless it already did or the committing capacity is taken (one per claim
// slot, more with WorkerTuning.VerdictBatchWait); the job then keeps its
// claim slot until it ends.
func (j *Job) freeSlotEarly() {
	s := j.worker.slots
	if j.slotFreed {
		return
	}
	select {
	case s.committing <- struct{}{}:
	default:
		return
	}
	j.slotFreed = true
	s.freed <- struct{}{}
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
// of other claim calls as long as a CommitRuns statement or a claim call
// takes, whichever is longer (claimTime is the claim calls' average), at
// most maxAdaptiveVerdictWait and half the claim's unrefreshed window,
// while verdicts arrive closer together than that; otherwise it waits for
// its own claim call's jobs, at most jobcompleter.CohortWait. A waiting
// verdict's run holds its tenant's admission, so the verdict of a job
// whose tenant was at its cap (Job.prompt) never waits for other calls':
// it sends the statement at once.
func newCompleter(client *Client, cfg WorkerConfig, claimTime func() time.Duration) *verdictCompleter {
	maxWait := min(maxAdaptiveVerdictWait, (cfg.ClaimTTL-cfg.HeartbeatInterval)/2)
	return jobcompleter.New(jobcompleter.Config[scopedCommit, committedSeq]{
		Flush:         client.commitRuns,
		CallTimeout:   workerCallTimeout,
		BatchWait:     cfg.Tuning.VerdictBatchWait,
		MaxBatch:      MaxVerdictBatch,
		LingerFor:     func(statement time.Duration) time.Duration { return min(max(statement, claimTime()), maxWait) },
		AdaptiveBatch: cfg.committingCapacity(),
	})
}

// CommitTx implements executor.Store.
func (s *jobSeam) CommitTx(ctx context.Context, tx pgx.Tx, f executor.Fence, p executor.Plan[commitPlan]) error {
	_, err := s.j.worker.client.CommitTx(ctx, tx, s.request(f, p))
	return err
}

// Applied implements executor.Store.
func (s *jobSeam) Applied(ctx context.Context, f executor.Fence, p executor.Plan[commitPlan]) (bool, error) {
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

// Refused implements executor.Work.
func (*jobSeam) Refused(step int, err error) executor.Plan[commitPlan] {
	return refused(step, err).exec()
}

// Stopped implements executor.Work.
func (*jobSeam) Stopped(step int) executor.Plan[commitPlan] { return stopped(step).exec() }

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
		endHandlerSpan(s.handlerSpan, e.Plan.Verdict, e.Err)
		return s.handlerSpan.parentOf(ctx)
	case executor.Writing:
		s.commitSpan, s.batch = j.startCommitSpan(ctx, e.Plan.Verdict), 0
	case executor.Carried:
		s.batch = e.Batch
		s.commitSpan.set(spanAttrBatchSize.Int(e.Batch))
	case executor.Wrote:
		s.wrote(ctx, e.Plan.Verdict, e.Ending, e.Err)
	case executor.Staged:
		w.debug(ctx, "docket worker run settled in the handler's transaction", j.RunID, "result", e.Plan.Verdict.checkpointType)
		j.noteDue(e.Plan.Verdict)
		j.verdict(e.Plan.Verdict, 0, nil)
	case executor.HandedBack:
		failure := e.Err
		if e.Checkpointed {
			// A hand-back is written alone.
			j.verdict(e.Plan.Verdict, 1, e.Err)
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

// startHandlerSpan starts the docket.handler span of j as a child of ctx's
// span (the Worker's Run context), linked to the span that inserted the run
// when the run stored one.
func (j *Job) startHandlerSpan(ctx context.Context) (context.Context, *span) {
	attrs := append(runAttrs(j.RunID, j.Scope, j.GraphID), spanAttrStep.Int(j.Step), spanAttrAttempt.Int(j.Attempt))
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	if j.link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: j.link}))
	}
	return j.worker.client.startSpan(ctx, spanHandler, trace.SpanKindConsumer, opts...)
}

// endHandlerSpan ends the handler span with the verdict's checkpoint type;
// a failed attempt (fail, panic, no_result, timeout, or backoff when the
// retry policy retries it) sets the status Error with handlerErr recorded when
// there is one.
func endHandlerSpan(sp *span, plan commitPlan, handlerErr error) {
	sp.set(spanAttrVerdict.String(plan.checkpointType))
	switch plan.checkpointType {
	case "fail", "panic", "no_result", "timeout", "backoff":
		sp.fail(handlerErr, "docket: the handler failed the run ("+plan.checkpointType+")")
	}
	sp.end(nil)
}

// parentOf returns io carrying the span, so the spans of the verdict's
// commit are its children; io itself without a span.
func (s *span) parentOf(io context.Context) context.Context {
	if s == nil {
		return io
	}
	return trace.ContextWithSpan(io, s.s)
}

// startCommitSpan starts the docket.commit span of the write of plan.
func (j *Job) startCommitSpan(ctx context.Context, plan commitPlan) *span {
	_, sp := j.worker.client.startSpan(ctx, spanCommit, trace.SpanKindClient, trace.WithAttributes(
		spanAttrRunID.String(j.RunID), spanAttrVerdict.String(plan.checkpointType)))
	return sp
}

// settled ends sp, the commit span of plan, with what became of the write
// (err its error), and reports the verdict event. A fence refusal is an
// answer, not a failure: only a write that failed sets the status Error.
func (j *Job) settled(sp *span, plan commitPlan, batch int, err error) {
	outcome := verdictOutcome(err)
	sp.set(spanAttrOutcome.String(outcome.String()), spanAttrFenced.Bool(outcome == VerdictFenced))
	if outcome == VerdictFailed {
		sp.fail(err, "docket: the verdict was not written")
	}
	sp.end(nil)
	j.verdict(plan, batch, err)
}
