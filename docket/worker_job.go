package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
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
	// starts; slot belongs to the job goroutine alone.

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
	// slot is the job's place in the worker; only the job goroutine uses
	// it.
	slot *jobSlot
}

// The causes a handler's context ends with when its claim is lost: the
// fence refused a write of the claim, a refresh found it gone, or it went
// unconfirmed for the claim TTL.
var (
	errFencedOut      = fmt.Errorf("%w: a commit was refused by the claim fence", ErrClaimLost)
	errStoreLostClaim = fmt.Errorf("%w: the store no longer shows the claim", ErrClaimLost)
	errClaimExpired   = fmt.Errorf("%w: not refreshed within the claim TTL", ErrClaimLost)
)

// newJob builds the job of lease with its claim call's read, a member of
// the call's cohort in the completer, and the handler's context, a child
// of base; the caller runs its executor (exec.Run) on that context and
// settles its membership when it ends. The job holds a slot of the worker
// from now on, and counts among its unstarted jobs until it begins.
func newJob(w *Worker, lease Lease, read *leaseRead, base context.Context) (*Job, context.Context) {
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
		member:        w.completer.Join(&read.cohort),
	}
	j.slot = &jobSlot{s: w.slots}
	step, unreadable := j.takeRead(read)
	seam := &jobSeam{j: j}
	j.exec = executor.New(executor.Config[commitPlan]{
		Store:             seam,
		Work:              seam,
		Slot:              j.slot,
		Reporter:          seam,
		HeartbeatInterval: w.cfg.HeartbeatInterval,
		ClaimTTL:          w.cfg.ClaimTTL,
		CallTimeout:       workerCallTimeout,
		Backoff:           errorBackoff,
		Sleep:             maintenance.Sleep,
		Unreadable:        unreadable,
		NotHeld:           errReleased,
		FencedOut:         errFencedOut,
		Cancelled:         revocationCause(StatusCancelled),
		Lost:              errStoreLostClaim,
		Expired:           errClaimExpired,
	}, executor.Fence{Seq: lease.CheckpointSeq, Step: step}, lease.ClaimedAt, cancel)
	w.slots.join(j)
	return j, handlerCtx
}

// Checkpoint stores step and state (nil keeps the document) and keeps the
// claim (a RetainClaim commit), so the handler goes on working in the same
// claim. A claim that is gone returns an error matching ErrClaimLost (and
// ErrStaleFence when the store refused the fence); the handler should then
// return, since nothing it does for this run can be committed any more.
func (j *Job) Checkpoint(ctx context.Context, step int, state json.RawMessage) error {
	fence, err := j.exec.Checkpoint(ctx, checkpointed(step, state))
	if errors.Is(err, ErrStaleFence) {
		return fmt.Errorf("%w: %w", ErrClaimLost, err)
	}
	if err != nil {
		return err
	}
	j.State, j.Step, j.CheckpointSeq = fence.State, fence.Step, fence.Seq
	return nil
}

// takeRead takes the claimed run from its claim call's read and returns
// its step. The read ran in the claim's own transaction, so it returns the
// leased version of every leased run; a run it lacks, or a row that does
// not match the lease, means the read is broken: the executor then hands
// the claim back without a checkpoint, so the run counts the attempt.
func (j *Job) takeRead(read *leaseRead) (int, error) {
	row, err := read.row(j.RunID)
	if err == nil && (RunStatus(row.Status) != StatusRunning || row.ClaimToken == nil ||
		*row.ClaimToken != j.holder.Token || row.CheckpointSeq != j.CheckpointSeq) {
		err = fmt.Errorf("docket: the read of run %s does not match its lease", quoteID(j.RunID))
	}
	if err != nil {
		return 0, err
	}
	j.link = extractTraceContext(row.TraceContext)
	j.State, j.Step = json.RawMessage(row.State), int(row.Step)
	j.attempt = int(row.Attempt) + 1
	j.Attempt = j.attempt
	if row.MaxAttempts != nil {
		j.maxAttempts = int(*row.MaxAttempts)
	}
	j.MaxAttempts = j.maxAttempts
	return int(row.Step), nil
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

// errZeroResult is the error a handler span records for the zero Result.
var errZeroResult = errors.New("docket: the handler returned the zero Result")

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
	err := j.exec.CommitTx(ctx, tx, func(step int) commitPlan { return r.plan(step, j.attempt, j.policy()) })
	switch {
	case errors.Is(err, executor.ErrStaged):
		return invalidArgument("run %s already has a verdict written in a transaction", quoteID(j.RunID))
	case errors.Is(err, errReleased):
		return fmt.Errorf("%w: run %s", ErrClaimLost, quoteID(j.RunID))
	}
	return err
}

// The stack part of a panic's error entry.
const (
	// PanicStackFrames is how many frames of the panicking handler's
	// goroutine a panic entry keeps at most, innermost first: the frame
	// that panicked, its caller, and so on up to the handler Docket called.
	PanicStackFrames = 16
	// PanicStackSeparator ends the panic value in a panic entry's text; the
	// frames follow it, one per two lines: the function's name, then a tab
	// and file:line. strings.Cut(text, PanicStackSeparator) splits the
	// value from the frames.
	PanicStackSeparator = "\n\nstack of the panicking goroutine, innermost first:\n"
	// panicStackOmitted is the last line of a stack that kept
	// PanicStackFrames frames of a deeper one.
	panicStackOmitted = "(outer frames omitted)"
)

// handleFunction is the name runtime frames give jobSeam.Handle, the frame
// that calls the handler: the stack of a panic entry ends right above it.
// It is set in init, since jobSeam.Panicked reads it.
var handleFunction string

func init() {
	handleFunction = runtime.FuncForPC(reflect.ValueOf((*jobSeam).Handle).Pointer()).Name()
}

// panicFrames returns the frames of the handler whose panic is being
// recovered, innermost first: at most PanicStackFrames of them, and whether
// deeper ones were left out. It must run while the panic is being
// recovered, from the function that recovered it (the executor's) or one it
// calls: the frames up to the runtime's panic frames are skipped, and the
// frames from jobSeam.Handle on are Docket's own.
func panicFrames() ([]runtime.Frame, bool) {
	// The recovering function, runtime.gopanic, the runtime's frames of a
	// runtime error, then PanicStackFrames frames and one to tell more.
	var pcs [PanicStackFrames + 32]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	var out []runtime.Frame
	inPanic, inRuntime := false, true
	for {
		f, more := frames.Next()
		switch {
		case !inPanic:
			inPanic = f.Function == "runtime.gopanic"
		case f.Function == handleFunction:
			return out, false
		case inRuntime && strings.HasPrefix(f.Function, "runtime."):
			// runtime.panicmem, runtime.sigpanic, runtime.mapassign...: how
			// the runtime raised a runtime error, not where the handler did.
		case len(out) == PanicStackFrames:
			return out, true
		default:
			inRuntime = false
			out = append(out, f)
		}
		if !more {
			// The buffer ended before jobSeam.Handle: frames were left out
			// when it was full.
			return out, n == len(pcs) && len(out) > 0
		}
	}
}

// panicText is the error text of a handler panic with value and the
// handler's frames: the value as fmt.Sprint prints it, then as many whole
// frames as fit in MaxRunErrorBytes, and the omission line when frames were
// left out, which takes the place of as many of the outermost kept frames
// as it needs. A value that fills the bound by itself is cut to it, and the
// frames are left out.
func panicText(value any, frames []runtime.Frame, omitted bool) string {
	text := storableText(fmt.Sprint(value))
	if len(frames) == 0 || len(text)+len(PanicStackSeparator) >= MaxRunErrorBytes {
		return errorText(text)
	}
	size := len(text) + len(PanicStackSeparator)
	var lines []string
	for _, f := range frames {
		line := storableText(f.Function + "\n\t" + f.File + ":" + strconv.Itoa(f.Line))
		if len(lines) > 0 {
			line = "\n" + line
		}
		if size+len(line) > MaxRunErrorBytes {
			break
		}
		lines = append(lines, line)
		size += len(line)
	}
	cut := omitted || len(lines) < len(frames)
	if cut {
		for len(lines) > 0 && size+1+len(panicStackOmitted) > MaxRunErrorBytes {
			size -= len(lines[len(lines)-1])
			lines = lines[:len(lines)-1]
		}
	}
	if len(lines) == 0 {
		return errorText(text)
	}
	var b strings.Builder
	b.Grow(size + 1 + len(panicStackOmitted))
	b.WriteString(text)
	b.WriteString(PanicStackSeparator)
	for _, line := range lines {
		b.WriteString(line)
	}
	if cut {
		b.WriteString("\n" + panicStackOmitted)
	}
	return b.String()
}
