package docket

// RunPhase is what a run is doing, as the schema's docket_run_phase function
// derives it from the run's row at the database clock of the read: every
// read of runs (FetchRun, InspectRun, ListRuns, ListDomainRuns, the CLI and
// the console) calls that one definition, and a phase filter selects by it.
// The phases are exclusive; the first that applies, in the order listed, is
// the run's phase.
type RunPhase string

// The run phases, in the function's order of precedence.
const (
	// PhaseDone is a run with status done.
	PhaseDone RunPhase = "done"
	// PhaseFailed is a run with status failed.
	PhaseFailed RunPhase = "failed"
	// PhaseCancelled is a run with status cancelled.
	PhaseCancelled RunPhase = "cancelled"
	// PhaseWaiting is a run with status waiting: parked on an external
	// event until a signal resumes it.
	PhaseWaiting RunPhase = "waiting"
	// PhasePoisoned is a running run with poison facts (PoisonedAt set): it
	// waits for RetryPoisonedRun.
	PhasePoisoned RunPhase = "poisoned"
	// PhaseExecuting is a healthy running run that a holder has claimed.
	PhaseExecuting RunPhase = "executing"
	// PhasePaused is an unclaimed healthy running run of a paused tenant
	// (PauseTenant) under TenantFair: it is neither admitted nor leased until
	// the tenant resumes. Legacy ignores the pause, so there it never shows.
	PhasePaused RunPhase = "paused"
	// PhaseRetrying is an unclaimed healthy running run that is not due yet
	// (WakeAt after the read's clock) and whose last write was a failed
	// handler attempt: its newest error entry is not an operator's retry
	// entry and was written at UpdatedAt.
	PhaseRetrying RunPhase = "retrying"
	// PhaseScheduled is any other unclaimed healthy running run that is not
	// due yet: inserted or released for a later time.
	PhaseScheduled RunPhase = "scheduled"
	// PhaseReady is an unclaimed healthy running run that is due and holds
	// its tenant's admission: the next claim takes it.
	PhaseReady RunPhase = "ready"
	// PhaseQueued is an unclaimed healthy running run that is due but not
	// admitted: it waits in its tenant's FIFO for a slot under the cap
	// (under Legacy, which never admits, every due unclaimed run).
	PhaseQueued RunPhase = "queued"
)

// runPhases is every phase in the order the CLI and the console show them:
// unfinished work from the earliest stage on, then the terminal ones.
var runPhases = []RunPhase{
	PhaseQueued, PhaseReady, PhaseExecuting, PhaseRetrying, PhaseScheduled,
	PhasePaused, PhaseWaiting, PhasePoisoned, PhaseDone, PhaseFailed, PhaseCancelled,
}

// RunPhases returns every phase, a new slice on each call, in the order the
// CLI and the console show them: unfinished work from the earliest stage
// on, then the terminal phases.
func RunPhases() []RunPhase {
	return append([]RunPhase(nil), runPhases...)
}

// Terminal reports whether p is done, failed or cancelled.
func (p RunPhase) Terminal() bool {
	return p == PhaseDone || p == PhaseFailed || p == PhaseCancelled
}

// valid reports whether p is one of the ten phases.
func (p RunPhase) valid() bool {
	for _, known := range runPhases {
		if p == known {
			return true
		}
	}
	return false
}
