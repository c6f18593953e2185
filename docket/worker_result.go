package docket

import (
	"encoding/json"
	"math"
	"time"

	"github.com/docketrun/docket-go/internal/executor"
)

// resultKind is what a Result asks the worker to commit.
type resultKind int

const (
	resultMissing resultKind = iota // the zero Result
	resultComplete
	resultFail
	resultFailNow
	resultRetry
	resultContinue
	resultYield
	resultWait
	resultSnooze
)

// Result is a handler's verdict on its run. The worker turns it into one
// commit fenced on the claim token and the job's checkpoint sequence, so a
// holder that lost its claim changes nothing. Build one with Complete, Fail,
// FailNow, RetryAt, RetryAfter, RetryAtError, RetryAfterError, Snooze,
// Continue, Yield or WaitExternal; the zero Result is a failed attempt like
// a panic. The commit's checkpoint type names the verdict ("complete",
// "fail" (also FailNow's), "retry", "snooze", "continue", "yield", "wait";
// "panic" for a recovered panic, "no_result" for the zero Result, "timeout"
// for a handler that outlived its timeout, "backoff" for a failed attempt
// the worker's RetryPolicy retries, "invalid_result" when the store refused
// the verdict's state, "stop" for a run the stopping worker handed back).
//
// Every verdict also moves the run's handler-attempt counter (Run.Attempt,
// seen by the next handler as Job.Attempt - 1): Continue and WaitExternal
// restart it at 0; Snooze, Yield, Job.Checkpoint and a stopping worker's
// hand-back keep it; Complete, every retry and every failure add one, and a
// failure also appends its error to the run's error history (Run.Errors).
// So a done run's Attempt is the number of handler attempts it took since
// its last Continue, its insertion or a RetryRun.
type Result struct {
	kind  resultKind
	step  int
	state json.RawMessage
	at    time.Time
	delay time.Duration
	err   error
}

// resultKinds names each resultKind for Result.Kind.
var resultKinds = [...]string{
	resultMissing:  "no_result",
	resultComplete: "complete",
	resultFail:     "fail",
	resultFailNow:  "fail_now",
	resultRetry:    "retry",
	resultContinue: "continue",
	resultYield:    "yield",
	resultWait:     "wait",
	resultSnooze:   "snooze",
}

// Kind names the verdict, for a Middleware that inspects a handler's
// Result: "complete", "fail", "fail_now", "retry" (every RetryAt and
// RetryAfter form), "snooze", "continue", "yield", "wait", or "no_result"
// for the zero Result.
func (r Result) Kind() string { return resultKinds[r.kind] }

// Err is the error the verdict records: Fail's, FailNow's or a
// Retry...Error's; nil for any other verdict.
func (r Result) Err() error { return r.err }

// Complete finishes the run as done with state as its final document; nil
// keeps the current one. The claim and the admission are released. The
// attempt counts: a run that failed twice, then completed, reads Attempt 3.
func Complete(state json.RawMessage) Result {
	return Result{kind: resultComplete, state: state}
}

// Fail reports a failed attempt with err, which is recorded in the run's
// error history (kind "error") and logged at debug level only, since it may
// carry identities. Under the worker's RetryPolicy an attempt with attempts
// left is retried after the policy's backoff (checkpoint type "backoff");
// the last one finishes the run as failed, keeping its document. The claim and the admission are released.
func Fail(err error) Result {
	return Result{kind: resultFail, err: err}
}

// FailNow is Fail without the RetryPolicy: the run fails at once whatever
// attempts are left, with err recorded in its error history.
func FailNow(err error) Result {
	return Result{kind: resultFailNow, err: err}
}

// RetryAt releases the claim and the admission and makes the run due again
// at t (ReleaseAt): the run queues again in its tenant's FIFO when t comes.
// The handler chooses the backoff, and the worker's RetryPolicy does not
// apply: t is kept exactly and MaxAttempts does not stop the retry. The
// retry counts as a handler attempt, so the next call sees Job.Attempt one
// higher (1, 2, 3... for a run retried again and again); a later Fail then
// finds fewer policy attempts left. A t that PostgreSQL's timestamptz cannot
// hold (outside 4714-11-24 BC to 294276-12-31 AD, UTC) is refused as
// invalid: the run fails with checkpoint type "invalid_result", as for any
// refused verdict.
func RetryAt(t time.Time) Result {
	return Result{kind: resultRetry, at: t}
}

// RetryAfter is RetryAt the commit's database time plus exactly d: the
// stored wake time is the run's updated_at plus d, to the microsecond.
func RetryAfter(d time.Duration) Result {
	return Result{kind: resultRetry, delay: d}
}

// Snooze makes the run due again d after the commit's database time (the
// stored wake time is its updated_at plus d, to the microsecond) without
// spending an attempt: the next call sees the same Job.Attempt, nothing is
// recorded in the error history, and the RetryPolicy's MaxAttempts is not
// nearer. It suits work that is not ready yet (a dependency still
// processing, a rate limit's window) rather than work that failed. Like
// RetryAfter it releases the claim and the admission, so under TenantFair
// the run queues again in its tenant's FIFO when it wakes; a d of zero or
// less makes it due at once.
func Snooze(d time.Duration) Result {
	return Result{kind: resultSnooze, delay: d}
}

// RetryAtError is RetryAt that also records err in the run's error history
// (kind "error"); a nil err records nothing.
func RetryAtError(err error, t time.Time) Result {
	return Result{kind: resultRetry, at: t, err: err}
}

// RetryAfterError is RetryAfter that also records err in the run's error
// history (kind "error"); a nil err records nothing.
func RetryAfterError(err error, d time.Duration) Result {
	return Result{kind: resultRetry, delay: d, err: err}
}

// Continue checkpoints step and state (nil keeps the document) and yields:
// the claim is released with the admission kept (ReleaseImmediate), so the
// run is due at once, ahead of any promotion in its tenant, and the next
// claim, by this or another worker, calls the handler again with the new
// checkpoint. To checkpoint and keep working in the same claim instead, call
// Job.Checkpoint inside the handler.
func Continue(step int, state json.RawMessage) Result {
	return Result{kind: resultContinue, step: step, state: state}
}

// Yield gives the run back without new state: a ReleaseImmediate commit that
// keeps the admission, so the run is handled again soon.
func Yield() Result {
	return Result{kind: resultYield}
}

// WaitExternal parks the run as waiting for an external event, with state as
// its document (nil keeps it); MutateRun resumes it. The claim and the
// admission are released.
func WaitExternal(state json.RawMessage) Result {
	return Result{kind: resultWait, state: state}
}

// commitPlan is the commit a result asks for.
type commitPlan struct {
	checkpointType string
	schedule       Disposition
	step           int
	state          json.RawMessage
	attempt        AttemptChange
	failure        *AttemptFailure
}

// exec is p as the executor writes it: whether it releases the claim,
// makes the run due now, and may share a statement.
func (p commitPlan) exec() executor.Plan[commitPlan] {
	return executor.Plan[commitPlan]{
		Verdict:  p,
		Releases: p.schedule.kind != "retain",
		Yields:   p.schedule.kind == "immediate",
		Shared:   p.shared(),
	}
}

// shared reports whether p can join a set-based statement (commitRuns): a
// schedule that releases the claim, and a schedule, step and state that
// Commit would accept (a RetryAt time PostgreSQL cannot hold would fail the
// whole statement), and an attempt change and failure Commit would accept.
// Anything else goes through Commit alone, which reports it.
func (p commitPlan) shared() bool {
	return p.schedule.kind != "retain" && p.schedule.validate() == nil &&
		p.step >= 0 && p.step <= math.MaxInt32 &&
		(p.state == nil || validateState(p.state) == nil) && p.attempt.valid() &&
		(p.failure == nil || (p.attempt == AttemptCount && validFailureKind(p.failure.Kind)))
}

// zeroResultText is the error text recorded for the zero Result.
const zeroResultText = "handler returned the zero Result"

// plan turns r into the commit of a job whose current step is step, in the
// handler attempt numbered attempt, under the resolved policy.
func (r Result) plan(step, attempt int, policy RetryPolicy) commitPlan {
	switch r.kind {
	case resultComplete:
		return commitPlan{"complete", ReleaseTerminal(StatusDone), step, r.state, AttemptCount, nil}
	case resultFail:
		return failedAttempt("fail", step, attempt, policy, failureOf(ErrorKindError, r.err))
	case resultFailNow:
		return commitPlan{"fail", ReleaseTerminal(StatusFailed), step, nil, AttemptCount, failureOf(ErrorKindError, r.err)}
	case resultRetry:
		schedule := releaseAfter(r.delay)
		if !r.at.IsZero() {
			schedule = ReleaseAt(r.at)
		}
		var failure *AttemptFailure
		if r.err != nil {
			failure = failureOf(ErrorKindError, r.err)
		}
		return commitPlan{"retry", schedule, step, nil, AttemptCount, failure}
	case resultSnooze:
		return commitPlan{"snooze", releaseAfter(r.delay), step, nil, AttemptKeep, nil}
	case resultContinue:
		return commitPlan{"continue", ReleaseImmediate(), r.step, r.state, AttemptReset, nil}
	case resultYield:
		return commitPlan{"yield", ReleaseImmediate(), step, nil, AttemptKeep, nil}
	case resultWait:
		return commitPlan{"wait", ReleaseExternal(), step, r.state, AttemptReset, nil}
	}
	return failedAttempt("no_result", step, attempt, policy, &AttemptFailure{Kind: ErrorKindNoResult, Error: zeroResultText})
}

// failureOf is the history entry of err ("" for a nil err).
func failureOf(kind string, err error) *AttemptFailure {
	f := &AttemptFailure{Kind: kind}
	if err != nil {
		f.Error = err.Error()
	}
	return f
}

// failedAttempt is the plan of the failed handler attempt numbered attempt:
// a "backoff" retry after the policy's delay while attempts are left, else
// a failure of the run named checkpointType.
func failedAttempt(checkpointType string, step, attempt int, policy RetryPolicy, failure *AttemptFailure) commitPlan {
	if attempt < policy.MaxAttempts {
		return commitPlan{"backoff", releaseAfter(policy.backoff(attempt)), step, nil, AttemptCount, failure}
	}
	return commitPlan{checkpointType, ReleaseTerminal(StatusFailed), step, nil, AttemptCount, failure}
}

// timedOut is the plan of a handler still running when its timeout passed,
// err the timeout's error: a failed attempt, whatever the handler returned.
func timedOut(step, attempt int, policy RetryPolicy, err error) commitPlan {
	return failedAttempt("timeout", step, attempt, policy, failureOf(ErrorKindError, err))
}

// panicked is the plan of a handler that panicked, text the entry's text
// (see panicText): a failed attempt.
func panicked(step, attempt int, policy RetryPolicy, text string) commitPlan {
	return failedAttempt("panic", step, attempt, policy, &AttemptFailure{Kind: ErrorKindPanic, Error: text})
}

// refused is the fallback plan when the store refuses a verdict as invalid
// (say, a state that is not JSON) with err: retrying cannot help, so the
// run fails with its document unchanged, the refusal in its history.
func refused(step int, err error) commitPlan {
	return commitPlan{"invalid_result", ReleaseTerminal(StatusFailed), step, nil, AttemptCount,
		failureOf(ErrorKindInvalidResult, err)}
}

// checkpointed is the plan of Job.Checkpoint: store step and state and keep
// the claim.
func checkpointed(step int, state json.RawMessage) commitPlan {
	return commitPlan{"checkpoint", RetainClaim(), step, state, AttemptKeep, nil}
}

// stopped is the plan of a run the stopping worker hands back: no new state,
// claim released, admission kept.
func stopped(step int) commitPlan {
	return commitPlan{"stop", ReleaseImmediate(), step, nil, AttemptKeep, nil}
}
