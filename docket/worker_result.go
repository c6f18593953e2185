package docket

import (
	"encoding/json"
	"time"
)

// resultKind is what a Result asks the worker to commit.
type resultKind int

const (
	resultMissing resultKind = iota // the zero Result
	resultComplete
	resultFail
	resultRetry
	resultContinue
	resultYield
	resultWait
)

// Result is a handler's verdict on its run. The worker turns it into one
// commit fenced on the claim token and the job's checkpoint sequence, so a
// holder that lost its claim changes nothing. Build one with Complete, Fail,
// RetryAt, RetryAfter, Continue, Yield or WaitExternal; the zero Result fails
// the run. The commit's checkpoint type names the verdict ("complete",
// "fail", "retry", "continue", "yield", "wait"; "panic" for a recovered
// panic, "no_result" for the zero Result, "invalid_result" when the store
// refused the verdict's state, "stop" for a run the stopping worker handed
// back).
type Result struct {
	kind  resultKind
	step  int
	state json.RawMessage
	at    time.Time
	delay time.Duration
	err   error
}

// Complete finishes the run as done with state as its final document; nil
// keeps the current one. The claim and the admission are released.
func Complete(state json.RawMessage) Result {
	return Result{kind: resultComplete, state: state}
}

// Fail finishes the run as failed, keeping its document. err is logged at
// debug level only, since it may carry identities. The claim and the
// admission are released.
func Fail(err error) Result {
	return Result{kind: resultFail, err: err}
}

// RetryAt releases the claim and the admission and makes the run due again
// at t (ReleaseAt): the run queues again in its tenant's FIFO when t comes.
// The handler chooses the backoff. Job.Attempt cannot count retries: it
// counts claims since the run's last commit, and a retry is a commit, so a
// retried run starts again at 1. To count handler attempts, keep the count
// in the run's state: call Job.Checkpoint with the incremented count, then
// return RetryAt (see the Worker section of the README). A t that PostgreSQL's timestamptz cannot hold (outside
// 4714-11-24 BC to 294276-12-31 AD, UTC) is refused as invalid: the run
// fails with checkpoint type "invalid_result", as for any refused verdict.
func RetryAt(t time.Time) Result {
	return Result{kind: resultRetry, at: t}
}

// RetryAfter is RetryAt the commit time plus d.
func RetryAfter(d time.Duration) Result {
	return Result{kind: resultRetry, delay: d}
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
	schedule       Schedule
	step           int
	state          json.RawMessage
}

// plan turns r into the commit of a job whose current step is step.
func (r Result) plan(step int, now time.Time) commitPlan {
	switch r.kind {
	case resultComplete:
		return commitPlan{"complete", ReleaseTerminal(StatusDone), step, r.state}
	case resultFail:
		return commitPlan{"fail", ReleaseTerminal(StatusFailed), step, nil}
	case resultRetry:
		at := r.at
		if at.IsZero() {
			at = now.Add(r.delay)
		}
		return commitPlan{"retry", ReleaseAt(at), step, nil}
	case resultContinue:
		return commitPlan{"continue", ReleaseImmediate(), r.step, r.state}
	case resultYield:
		return commitPlan{"yield", ReleaseImmediate(), step, nil}
	case resultWait:
		return commitPlan{"wait", ReleaseExternal(), step, r.state}
	}
	return commitPlan{"no_result", ReleaseTerminal(StatusFailed), step, nil}
}

// panicked is the plan of a handler that panicked: the run fails.
func panicked(step int) commitPlan {
	return commitPlan{"panic", ReleaseTerminal(StatusFailed), step, nil}
}

// refused is the fallback plan when the store refuses a verdict as invalid
// (say, a state that is not JSON): retrying cannot help, so the run fails
// with its document unchanged.
func refused(step int) commitPlan {
	return commitPlan{"invalid_result", ReleaseTerminal(StatusFailed), step, nil}
}

// releasesClaim reports whether committing p ends the holder's claim.
func (p commitPlan) releasesClaim() bool { return p.schedule.kind != "retain" }

// yields reports whether p makes the run due now with its admission kept.
func (p commitPlan) yields() bool { return p.schedule.kind == "immediate" }

// checkpointed is the plan of Job.Checkpoint: store step and state and keep
// the claim.
func checkpointed(step int, state json.RawMessage) commitPlan {
	return commitPlan{"checkpoint", RetainClaim(), step, state}
}

// stopped is the plan of a run the stopping worker hands back: no new state,
// claim released, admission kept.
func stopped(step int) commitPlan {
	return commitPlan{"stop", ReleaseImmediate(), step, nil}
}
