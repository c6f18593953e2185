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

// jobSeam is what package executor needs of one job: its claim's store
// calls (executor.Store) and the worker's logs, metrics, spans and events
// (executor.Hooks).
type jobSeam struct{ j *Job }

var (
	_ executor.Store[commitPlan] = jobSeam{}
	_ executor.Hooks[commitPlan] = jobSeam{}
)

// ReleasesClaim and Yields make a commitPlan an executor.Plan.

// ReleasesClaim reports whether committing p ends the holder's claim.
func (p commitPlan) ReleasesClaim() bool { return p.schedule.kind != "retain" }

// Yields reports whether p makes the run due now with its admission kept.
func (p commitPlan) Yields() bool { return p.schedule.kind == "immediate" }

// request is the commit request of p fenced on f.
func (s jobSeam) request(f executor.Fence, p commitPlan) CommitRequest {
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
func (s jobSeam) Commit(ctx context.Context, f executor.Fence, p commitPlan) (executor.Fence, error) {
	run, err := s.j.worker.client.Commit(ctx, s.request(f, p))
	return executor.Fence{Seq: run.CheckpointSeq, Step: run.Step, State: run.State}, err
}

// CommitGrouped implements executor.Store: the verdict goes to the
// worker's completer, and the job's slot is freed once it joins a
// statement, when the worker allows.
func (s jobSeam) CommitGrouped(ctx context.Context, f executor.Fence, p commitPlan) (executor.Fence, int, error) {
	w := s.j.worker
	req := s.request(f, p)
	scopeKey, err := w.client.holderKey(req.Holder)
	if err != nil {
		return executor.Fence{}, 0, err
	}
	done, size, err := w.completer.Complete(ctx, s.j.member, scopedCommit{req: req, scopeKey: scopeKey},
		func() { w.releaseSlotEarly(s.j) })
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
		Batchable:     func(c scopedCommit) bool { return c.req.batchable() },
		BatchWait:     cfg.Tuning.VerdictBatchWait,
		MaxBatch:      MaxVerdictBatch,
		LingerFor:     func(statement time.Duration) time.Duration { return min(statement, maxWait) },
		AdaptiveBatch: cfg.committingCapacity(),
	})
}

// CommitTx implements executor.Store.
func (s jobSeam) CommitTx(ctx context.Context, tx pgx.Tx, f executor.Fence, p commitPlan) error {
	_, err := s.j.worker.client.CommitTx(ctx, tx, s.request(f, p))
	return err
}

// Applied implements executor.Store.
func (s jobSeam) Applied(ctx context.Context, f executor.Fence, p commitPlan) (bool, error) {
	return s.j.worker.client.commitApplied(ctx, s.request(f, p))
}

// Release implements executor.Store.
func (s jobSeam) Release(ctx context.Context) (bool, error) {
	return s.j.worker.client.ReleaseClaim(ctx, s.j.holder)
}

// Refresh implements executor.Store.
func (s jobSeam) Refresh(ctx context.Context) error {
	_, err := s.j.worker.client.RefreshClaim(ctx, s.j.holder)
	return err
}

// Answer implements executor.Store.
func (jobSeam) Answer(err error) executor.Answer { return writeAnswer(err) }

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
	}
	return executor.Unanswered
}

// Gone implements executor.Store.
func (jobSeam) Gone(err error) bool {
	return errors.Is(err, ErrClaimLost) || errors.Is(err, ErrNotFound)
}

// Writing implements executor.Hooks: the docket.commit span of p.
func (s jobSeam) Writing(ctx context.Context, p commitPlan) executor.Write {
	return &commitWrite{j: s.j, plan: p, span: s.j.startCommitSpan(ctx, p)}
}

// Verdict implements executor.Hooks: a hand-back is written alone.
func (s jobSeam) Verdict(p commitPlan, err error) { s.j.verdict(p, 1, err) }

// Staged implements executor.Hooks.
func (s jobSeam) Staged(ctx context.Context, p commitPlan) {
	s.j.worker.debug(ctx, "docket worker run settled in the handler's transaction", s.j.RunID, "result", p.checkpointType)
	s.j.noteDue(p)
	s.j.verdict(p, 0, nil)
}

// Refused implements executor.Hooks.
func (jobSeam) Refused(step int, err error) commitPlan { return refused(step, err) }

// Stopped implements executor.Hooks.
func (jobSeam) Stopped(step int) commitPlan { return stopped(step) }

// Yielded implements executor.Hooks.
func (s jobSeam) Yielded(ctx context.Context) { s.j.worker.announceYield(ctx) }

// Failure implements executor.Hooks.
func (s jobSeam) Failure(ctx context.Context, msg string, err error) {
	s.j.worker.failure(ctx, msg, s.j.RunID, err)
}

// Lost implements executor.Hooks.
func (s jobSeam) Lost(ctx context.Context, err error) error {
	w := s.j.worker
	w.logger.InfoContext(ctx, "docket worker lost a claim; cancelling its handler")
	w.debug(ctx, "docket worker claim lost", s.j.RunID)
	if errors.Is(err, ErrRunCancelled) {
		return revocationCause(StatusCancelled)
	}
	return fmt.Errorf("%w: the store no longer shows the claim", ErrClaimLost)
}

// Expired implements executor.Hooks.
func (s jobSeam) Expired(ctx context.Context) error {
	s.j.worker.logger.WarnContext(ctx, "docket worker presumes a claim lost after a ClaimTTL without refresh; cancelling its handler")
	return fmt.Errorf("%w: not refreshed within the claim TTL", ErrClaimLost)
}

// commitWrite is the docket.commit span of one plan's write, and what the
// worker logs and counts of its end.
type commitWrite struct {
	j    *Job
	plan commitPlan
	span *span
	// batch is the size of the statement that carried the write.
	batch int
}

// Carried implements executor.Write.
func (c *commitWrite) Carried(n int) {
	c.batch = n
	c.span.set(spanAttrBatchSize.Int(n))
}

// End implements executor.Write.
func (c *commitWrite) End(ctx context.Context, e executor.Ending, err error) {
	j, w, kind := c.j, c.j.worker, c.plan.checkpointType
	switch e {
	case executor.Written:
		w.debug(ctx, "docket worker run settled", j.RunID, "result", kind)
		j.noteDue(c.plan)
	case executor.Dropped:
		w.debug(ctx, "docket worker dropped a verdict; the claim was already given up", j.RunID, "result", kind)
	case executor.AppliedEarlier:
		w.client.telemetry.fenced(ctx, fenceAlreadyApplied)
		w.debug(ctx, "docket worker run settled; its commit was already applied", j.RunID, "result", kind)
		j.noteDue(c.plan)
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
	j.settled(c.span, c.plan, c.batch, err)
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
