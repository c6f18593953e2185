package docket

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/docketrun/docket-go/internal/executor"
)

// WorkerEventKind says what a WorkerEvent reports.
type WorkerEventKind int

// Kinds of WorkerEvent.
const (
	// EventListening: a LISTEN session took effect, so runs inserted due
	// now from here on wake the worker at once. Reported again after every
	// reconnect.
	EventListening WorkerEventKind = iota + 1
	// EventClaimed: a claim call returned; Leases and Poisoned count its
	// outcomes, Err is its error (nil on success).
	EventClaimed
	// EventHandlerStarted: the handler of run RunID of Scope is about to be
	// called.
	EventHandlerStarted
	// EventVerdict: the worker's write of a verdict on run RunID of Scope
	// ended; Verdict names it and Outcome says what became of it.
	EventVerdict
	// EventRetention: a pass of the retention cleaner ended; Deleted counts
	// the runs it deleted, Err is its error (nil on success).
	EventRetention
	// EventScheduleTick: the schedule taker committed a tick of schedule
	// Schedule of Scope at TickAt; RunID is the tick's run, inserted when Err
	// is nil (see ScheduleTick.Err otherwise).
	EventScheduleTick
	// EventSchedulePass: a pass of the schedule taker ended; Ticks counts
	// the ticks it committed, Err is its error (nil on success). A pass cut
	// short by the worker's stop reports nothing.
	EventSchedulePass
)

// String names k.
func (k WorkerEventKind) String() string {
	switch k {
	case EventListening:
		return "listening"
	case EventClaimed:
		return "claimed"
	case EventHandlerStarted:
		return "handler_started"
	case EventVerdict:
		return "verdict"
	case EventRetention:
		return "retention"
	case EventScheduleTick:
		return "schedule_tick"
	case EventSchedulePass:
		return "schedule_pass"
	}
	return "unknown"
}

// VerdictOutcome is what became of a verdict the worker tried to write.
type VerdictOutcome int

// Outcomes of an EventVerdict.
const (
	// VerdictWritten: the commit took effect; a read that starts after the
	// event sees it.
	VerdictWritten VerdictOutcome = iota + 1
	// VerdictFenced: the claim fence refused the commit (ErrStaleFence or
	// ErrNotFound in Err): a newer holder owns the run, nothing changed.
	VerdictFenced
	// VerdictDropped: nothing was sent, since the worker had already given
	// the claim up (reported lost, or handed back by a stopping worker).
	VerdictDropped
	// VerdictFailed: the commit was not written (Err says why). A verdict the
	// store refused as invalid is followed by the "invalid_result" verdict
	// that fails the run; otherwise the claim expires after ClaimTTL and the
	// run is claimed again.
	VerdictFailed
	// VerdictCancelled: the claim fence refused the commit because an
	// operator cancelled the run while its handler ran (Err matches
	// ErrRunCancelled and ErrStaleFence); nothing changed.
	VerdictCancelled
)

// String names o.
func (o VerdictOutcome) String() string {
	switch o {
	case VerdictWritten:
		return "written"
	case VerdictFenced:
		return "fenced"
	case VerdictDropped:
		return "dropped"
	case VerdictFailed:
		return "failed"
	case VerdictCancelled:
		return "cancelled"
	}
	return "unknown"
}

// WorkerEvent is one thing a Worker did, reported to WorkerConfig.OnEvent as
// it happens. Fields a Kind does not use are zero. Unlike the worker's logs
// and metrics it carries identities: it stays in the application's process.
type WorkerEvent struct {
	// Kind says what happened.
	Kind WorkerEventKind
	// RunID and Scope name the run of an EventHandlerStarted or
	// EventVerdict.
	RunID string
	Scope Scope
	// Verdict is an EventVerdict's checkpoint type: the handler's verdict
	// ("complete", "fail", "retry", "continue", "yield", "wait", "panic",
	// "no_result"), "backoff" for a failed attempt the RetryPolicy retries,
	// "invalid_result" for the failure that replaces a verdict the store
	// refused as invalid, or "stop" for a claim a stopping worker handed
	// back (see Result).
	Verdict string
	// Outcome is what became of an EventVerdict's write.
	Outcome VerdictOutcome
	// Batch counts the verdicts of the statement that carried an
	// EventVerdict's write, this one included (see VerdictBatchWait); 0
	// when the worker sent none (a verdict written in the handler's
	// transaction, or dropped).
	Batch int
	// Leases and Poisoned count the outcomes of an EventClaimed.
	Leases, Poisoned int
	// Deleted counts the runs an EventRetention pass deleted.
	Deleted int64
	// Schedule and TickAt name the schedule and tick of an
	// EventScheduleTick (with RunID and Scope).
	Schedule string
	TickAt   time.Time
	// Ticks counts the ticks an EventSchedulePass committed.
	Ticks int
	// Err is the error of a failed claim call, retention pass or schedule
	// pass, of a verdict that was fenced or failed, or of a tick that
	// inserted no run.
	Err error
}

// emit reports e to the OnEvent hook, if any.
func (w *Worker) emit(e WorkerEvent) {
	if w.cfg.OnEvent != nil {
		w.cfg.OnEvent(e)
	}
}

// verdictOutcome classifies the result of a verdict's write.
func verdictOutcome(err error) VerdictOutcome {
	switch {
	case err == nil:
		return VerdictWritten
	case errors.Is(err, errReleased):
		return VerdictDropped
	}
	switch writeAnswer(err) {
	case executor.Cancelled:
		return VerdictCancelled
	case executor.Fenced:
		return VerdictFenced
	}
	return VerdictFailed
}

// debug logs msg at debug level with the run id, the only place the worker
// logs an identity.
func (w *Worker) debug(ctx context.Context, msg, runID string, attrs ...any) {
	if !w.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	w.logger.DebugContext(ctx, msg, append([]any{"run_id", runID}, attrs...)...)
}

// failure logs a failed call about one run: at warn level with an
// identity-free reason, at debug level with the run id and the error, whose
// text may name the run.
func (w *Worker) failure(ctx context.Context, msg, runID string, err error) {
	w.logger.WarnContext(ctx, msg, "reason", errorReason(err))
	w.debug(ctx, msg, runID, "error", err.Error())
}

// errorReason classifies err into a bounded, identity-free reason.
func errorReason(err error) string {
	switch {
	case errors.Is(err, ErrStaleFence):
		return "stale_fence"
	case errors.Is(err, ErrClaimLost):
		return "claim_lost"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrInvalidArgument):
		return "invalid_argument"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "database"
}
