package docket

import (
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// MaxStateBytes is the largest run state document accepted, in bytes of JSON
// as given by the caller (1 MiB).
const MaxStateBytes = 1 << 20

// RunStatus is the public status of a run.
type RunStatus string

// The run statuses. Running and waiting runs are unfinished; done, failed and
// cancelled are terminal.
const (
	// StatusRunning is due, scheduled, claimed or poisoned work.
	StatusRunning RunStatus = "running"
	// StatusWaiting is parked on an external event, outside admission.
	StatusWaiting RunStatus = "waiting"
	// StatusDone is a completed run.
	StatusDone RunStatus = "done"
	// StatusFailed is a run that ended in failure.
	StatusFailed RunStatus = "failed"
	// StatusCancelled is a run that was cancelled.
	StatusCancelled RunStatus = "cancelled"
)

// Terminal reports whether s is done, failed or cancelled.
func (s RunStatus) Terminal() bool {
	return s == StatusDone || s == StatusFailed || s == StatusCancelled
}

// valid reports whether s is one of the five statuses.
func (s RunStatus) valid() bool {
	return s == StatusRunning || s == StatusWaiting || s.Terminal()
}

// NewRun describes a run to insert. It always starts with status running.
type NewRun struct {
	// RunID is the public identity; empty generates a random UUID string.
	RunID string
	// Scope is the owner; Tenantless is refused under TenantRequired.
	Scope Scope
	// GraphID names the workflow; required.
	GraphID string
	// GraphHash names the workflow version; required.
	GraphHash string
	// State is the initial run document: valid JSON of at most MaxStateBytes.
	State json.RawMessage
	// WakeAt is when the run becomes due; zero means now (database clock).
	// A time PostgreSQL's timestamptz cannot hold (before 4714-11-24 BC or
	// from 294277-01-01 UTC on) is ErrInvalidArgument.
	WakeAt time.Time
	// MaxAttempts, when positive, is the number of handler attempts the run
	// gets before a failure fails it, in place of the Worker's RetryPolicy
	// MaxAttempts (WorkerConfig.Retry or the graph's HandlerRetry); the
	// policy's delays still apply. 1 retries nothing. Zero (the default)
	// leaves the policy's; a negative value or one above 2147483647 is
	// ErrInvalidArgument.
	MaxAttempts int
	// Unique, when set, inserts the run only if no other run of its scope
	// holds its unique key in its period; see Uniqueness.
	Unique *Uniqueness
}

// Uniqueness makes an insert unique. The run takes a key, and while its
// status is one of Statuses no other run of the same scope can take the same
// key in the same period bucket: the database's unique index refuses the
// second, whichever client or statement inserts it. An insert that meets a
// holder writes nothing and returns the holder with ErrUniqueRunExists
// (UniqueRunsExistError for a batch), without aborting the caller's
// transaction. The run gives its key up for good when its status leaves
// Statuses.
type Uniqueness struct {
	// Key is the unique key, under the identifier rules; empty derives it
	// from the graph id and the state: the hex SHA-256 of the graph id, a
	// zero byte and the state's JSON with object keys sorted and without
	// insignificant space, so equal documents (say, the same typed value)
	// give equal keys.
	Key string
	// Period, when positive, confines the key to a window: buckets of Period
	// counted from the Unix epoch in UTC (24*time.Hour is the UTC day), the
	// run's bucket being the one that holds the wake time it is inserted
	// with (the insert time when WakeAt is zero). Zero is one window of all
	// time. It must be a whole number of microseconds.
	Period time.Duration
	// Statuses are the statuses in which the run holds its key; empty means
	// the unfinished ones, running and waiting. It must include running, the
	// status every run is inserted with.
	Statuses []RunStatus
}

// Run is the public view of a run. It never carries the claim token, which
// only the claim call hands to its holder, nor the internal admission marker;
// see InspectRun for the derived admission state.
type Run struct {
	// RunID is the public identity.
	RunID string
	// Scope is the owner.
	Scope Scope
	// GraphID names the workflow.
	GraphID string
	// GraphHash names the workflow version.
	GraphHash string
	// Status is the lifecycle status.
	Status RunStatus
	// Phase is what the run is doing at the database clock of the read or
	// write that returned it (see RunPhase): every Run the facade returns
	// carries it, and so does the one MutateRun's decide function receives.
	Phase RunPhase
	// Step is the step of the latest commit.
	Step int
	// State is the run document as stored (jsonb normalizes its spacing).
	State json.RawMessage
	// CheckpointSeq is the commit fence: each commit adds one.
	CheckpointSeq int64
	// LatestCheckpointType is the type the latest commit named, or "".
	LatestCheckpointType string
	// ClaimedAt is when the current claim was taken or refreshed; nil when unclaimed.
	ClaimedAt *time.Time
	// WakeAt is when an unclaimed running run is due; nil when claimed,
	// waiting, poisoned or terminal.
	WakeAt *time.Time
	// ClaimAttempts counts claims since the last commit or retry.
	ClaimAttempts int
	// ClaimAbandons counts abandons since the last commit or retry.
	ClaimAbandons int
	// Attempt counts the handler attempts that ended in a Complete, retry
	// or failure verdict since the run's last Continue or WaitExternal
	// verdict, its insertion or an operator's RetryRun (see Result): a run
	// done after two failed attempts reads 3, as many as its error history
	// has entries plus the one that completed. The next handler call sees
	// Job.Attempt = Attempt + 1.
	Attempt int
	// MaxAttempts is the run's own max attempts (NewRun.MaxAttempts); 0
	// when it has none and the Worker's retry policy decides.
	MaxAttempts int
	// Errors is the run's error history, oldest first: the newest
	// MaxRunErrors failed handler attempts. RetryRun keeps it.
	Errors []RunError
	// PoisonedAt is when the run was poisoned; nil when healthy.
	PoisonedAt *time.Time
	// PoisonReason is max_claim_attempts_exceeded or
	// max_claim_abandons_exceeded when poisoned, else "".
	PoisonReason string
	// InsertedAt is when the row was written.
	InsertedAt time.Time
	// StartedAt orders listings: it is the time the run was inserted, as
	// InsertedAt, not when a handler first ran.
	StartedAt time.Time
	// UpdatedAt is the time of the latest write.
	UpdatedAt time.Time
	// FinishedAt is set iff the status is terminal.
	FinishedAt *time.Time
	// UniqueKey is the unique key the run holds (see Uniqueness), or ""
	// when it was inserted without one or has given it up.
	UniqueKey string
	// UniqueBucket is the start of the period bucket the run holds its key
	// in; nil when it holds none or its key has no period.
	UniqueBucket *time.Time
}

// Claimed reports whether some holder currently has the run claimed.
func (r Run) Claimed() bool { return r.ClaimedAt != nil }

// Poisoned reports whether the run waits for RetryPoisonedRun.
func (r Run) Poisoned() bool { return r.PoisonedAt != nil }

// AdmissionState is the derived, token-free admission state of a run.
type AdmissionState string

// The derived admission states. TenantFair produces the first four; Legacy
// never admits, so its claims show as AdmissionUnadmittedClaimed.
const (
	// AdmissionQueued is healthy running, due, unclaimed and unadmitted:
	// waiting in its tenant's FIFO for promotion.
	AdmissionQueued AdmissionState = "queued"
	// AdmissionAdmittedReady is healthy running, unclaimed and admitted: it
	// holds a slot and is served before any promotion once due (every write
	// that keeps a marker on an unclaimed run makes it due at once).
	AdmissionAdmittedReady AdmissionState = "admitted-ready"
	// AdmissionAdmittedClaimed is healthy running, claimed and admitted.
	AdmissionAdmittedClaimed AdmissionState = "admitted-claimed"
	// AdmissionInactive is future-scheduled, externally waiting, poisoned or
	// terminal, with no admission.
	AdmissionInactive AdmissionState = "inactive"
	// AdmissionUnadmittedClaimed is a claim taken by the Legacy engine, which
	// never writes admission markers.
	AdmissionUnadmittedClaimed AdmissionState = "unadmitted-claimed"
)

// RunInspection is the scheduling view of one run for operators. It never
// carries the claim token.
type RunInspection struct {
	// RunID is the public identity.
	RunID string
	// Scope is the owner.
	Scope Scope
	// Status is the lifecycle status.
	Status RunStatus
	// WakeAt is when an unclaimed running run is due.
	WakeAt *time.Time
	// ClaimedAt is when the current claim was taken or refreshed.
	ClaimedAt *time.Time
	// ClaimAttempts counts claims since the last commit or retry.
	ClaimAttempts int
	// ClaimAbandons counts abandons since the last commit or retry.
	ClaimAbandons int
	// Attempt is the handler-attempt counter, as in Run.
	Attempt int
	// Errors is the error history, as in Run.
	Errors []RunError
	// PoisonedAt is when the run was poisoned.
	PoisonedAt *time.Time
	// PoisonReason is the poison reason, or "".
	PoisonReason string
	// AdmittedAt is the sticky admission marker: when the run was promoted,
	// or nil when it holds no admission.
	AdmittedAt *time.Time
	// State is derived from the row and ObservedAt.
	State AdmissionState
	// Phase is the run's phase at ObservedAt, as in Run.
	Phase RunPhase
	// ObservedAt is the database clock the inspection was read at.
	ObservedAt time.Time
}

// RunCursor is an exclusive ListRuns position: the last run of a page.
type RunCursor struct {
	// StartedAt is the start time of the last listed run.
	StartedAt time.Time
	// RunID is the run id of the last listed run.
	RunID string
}

// ListRunsRequest selects one page of a scope's runs, newest first.
type ListRunsRequest struct {
	// Scope is the owner whose runs are listed; required.
	Scope Scope
	// GraphID keeps only runs of this workflow when non-empty.
	GraphID string
	// Status keeps only runs of this status when non-empty.
	Status RunStatus
	// Phase keeps only runs in this phase at the database clock of the read
	// when non-empty; a value that is not a RunPhase is ErrInvalidArgument.
	Phase RunPhase
	// After continues strictly after this cursor; nil starts at the newest run.
	After *RunCursor
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// Page sizes of ListRuns.
const (
	// DefaultListLimit is the page size of a ListRunsRequest with Limit 0.
	DefaultListLimit = 100
	// MaxListLimit is the largest page size ListRuns serves.
	MaxListLimit = 1000
)

// RunPage is one page of ListRuns.
type RunPage struct {
	// Runs are newest first by (StartedAt, RunID).
	Runs []Run
	// Next continues the listing; nil when this is the last page.
	Next *RunCursor
}

// runWithPhase maps a stored row read with its phase to its public view.
func runWithPhase(row dbgen.DocketRun, phase string) Run {
	r := runFromRow(row)
	r.Phase = RunPhase(phase)
	return r
}

// runFromRow maps a stored row to its public view, dropping the claim token
// and the admission marker; the phase is left "" for the caller that read it.
func runFromRow(row dbgen.DocketRun) Run {
	return Run{
		RunID:                row.RunID,
		Scope:                scopeOf(row.TenantID),
		GraphID:              row.GraphID,
		GraphHash:            row.GraphHash,
		Status:               RunStatus(row.Status),
		Step:                 int(row.Step),
		State:                json.RawMessage(row.State),
		CheckpointSeq:        row.CheckpointSeq,
		LatestCheckpointType: deref(row.LatestCheckpointType),
		ClaimedAt:            row.ClaimedAt,
		WakeAt:               row.WakeAt,
		ClaimAttempts:        int(row.ClaimAttempts),
		ClaimAbandons:        int(row.ClaimAbandons),
		Attempt:              int(row.Attempt),
		MaxAttempts:          int(derefInt32(row.MaxAttempts)),
		Errors:               runErrors(row.Errors),
		PoisonedAt:           row.PoisonedAt,
		PoisonReason:         deref(row.PoisonReason),
		InsertedAt:           row.InsertedAt,
		StartedAt:            row.StartedAt,
		UpdatedAt:            row.UpdatedAt,
		FinishedAt:           row.FinishedAt,
		UniqueKey:            deref(row.UniqueKey),
		UniqueBucket:         row.UniqueBucket,
	}
}

// derefInt32 returns *p, or 0 for nil.
func derefInt32(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// deref returns *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

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
