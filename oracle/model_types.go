package oracle

import "time"

// Status is a run status.
type Status string

// Run statuses. Running and waiting are unfinished; the rest are terminal.
const (
	StatusRunning   Status = "running"   // runnable, claimed or poisoned
	StatusWaiting   Status = "waiting"   // waiting for an external event
	StatusDone      Status = "done"      // finished successfully
	StatusFailed    Status = "failed"    // finished with a failure
	StatusCancelled Status = "cancelled" // cancelled
)

// Unfinished reports whether s counts in a partition's unfinished_count.
func (s Status) Unfinished() bool { return s == StatusRunning || s == StatusWaiting }

// Terminal reports whether s is done, failed or cancelled.
func (s Status) Terminal() bool {
	return s == StatusDone || s == StatusFailed || s == StatusCancelled
}

// WorkClass is the work_class of an outcome.
type WorkClass string

// Work classes of outcomes.
const (
	ClassAdmittedReady WorkClass = "admitted_ready" // due, unclaimed, marked
	ClassQueuedReady   WorkClass = "queued_ready"   // due, unclaimed, unmarked
	ClassExpired       WorkClass = "expired"        // claimed with claimed_at < cutoff
)

// OutcomeDisposition is the disposition of an outcome.
type OutcomeDisposition string

// Outcome dispositions. Legacy outcomes of ready rows carry the empty
// disposition because Legacy neither promotes nor reacquires admissions.
const (
	OutcomeAdmittedReacquisition OutcomeDisposition = "admitted_reacquisition" // admitted-ready row
	OutcomeQueuedPromotion       OutcomeDisposition = "queued_promotion"       // queued row (marker set on lease)
	OutcomeExpiredRecovery       OutcomeDisposition = "expired_recovery"       // expired admitted claim
)

// Preference is the advisory class preference of a claim call.
type Preference string

// Claim preferences; PreferNone is SQL NULL.
const (
	PreferNone    Preference = ""        // no preference (NULL)
	PreferReady   Preference = "ready"   // prefer ready work
	PreferExpired Preference = "expired" // prefer expired claims
)

// Poison reasons.
const (
	PoisonMaxClaimAttempts = "max_claim_attempts_exceeded" // poisoned by a claim call
	PoisonMaxClaimAbandons = "max_claim_abandons_exceeded" // poisoned by AbandonClaim
)

// MaxCap is the largest admission cap (default or override) accepted.
const MaxCap = 2147483647

// Budgets are the per-call budgets of the TenantFair claim.
type Budgets struct {
	S int // inspections per unfilled call
	Q int // outcomes per grant
	K int // frozen candidates per visit
}

// DefaultBudgets returns the production budgets S = 32, Q = 8, K = 16.
func DefaultBudgets() Budgets { return Budgets{S: DefaultS, Q: DefaultQ, K: DefaultK} }

// Run is a snapshot of one run row of the model. Optional timestamps are
// paired with a presence flag (Token != "" means claimed).
type Run struct {
	ID            int64     // internal id, increasing on insert
	RunID         string    // public identity
	Scope         string    // scope key ("" is tenantless)
	Status        Status    // run status
	HasWake       bool      // wake_at is not NULL
	WakeAt        time.Time // next due time when HasWake
	Token         string    // claim token; "" when unclaimed
	ClaimedAt     time.Time // claim time when claimed
	Attempts      int       // claim_attempts
	Abandons      int       // claim_abandons
	CheckpointSeq int64     // commit fence
	Poisoned      bool      // poisoned_at is not NULL
	PoisonedAt    time.Time // poison time when poisoned
	PoisonReason  string    // poison reason when poisoned
	Admitted      bool      // tenant_admitted_at is not NULL
	AdmittedAt    time.Time // tenant_admitted_at when admitted
}

// Claimed reports whether the run holds a claim token.
func (r Run) Claimed() bool { return r.Token != "" }

// Healthy reports whether the run is running and not poisoned.
func (r Run) Healthy() bool { return r.Status == StatusRunning && !r.Poisoned }

// Partition is a snapshot of one owner partition and its schedule row.
type Partition struct {
	Scope      string // scope key ("" is tenantless)
	Position   int64  // immutable ring position, from 1 in creation order
	Override   int    // cap override; 0 means inherit the default
	Epoch      int64  // admission_epoch
	Unfinished int    // unfinished_count
	// Parked reports a parked partition (parked mode); ParkedUntil is the
	// time it wakes, zero when it is parked until a write ('infinity').
	Parked      bool
	ParkedUntil time.Time
	// Paused reports an operator's pause (docket_claim_partitions.paused):
	// every TenantFair visit of the partition ends as DispPaused.
	Paused bool
	// Rate is the partition's own rate (zero: none); RateExempt exempts it
	// from the default; RateTAT is its rate time (zero: never promoted
	// under a rate).
	Rate       Rate
	RateExempt bool
	RateTAT    time.Time
}

// ScopeCounts are the effective per-scope counts of the model.
type ScopeCounts struct {
	Queued          int // healthy, due, unclaimed, unadmitted
	AdmittedReady   int // healthy, due, unclaimed, admitted
	AdmittedClaimed int // healthy, claimed, admitted
	Admitted        int // healthy with a marker
	LiveClaims      int // rows holding a claim token
	Cap             int // effective cap
	Debt            int // max(Admitted - Cap, 0)
	Unfinished      int // running or waiting rows
}

// Outcome is one outcome of a claim call.
type Outcome struct {
	Visit         int                // visit ordinal that produced it (0 for Legacy)
	Ordinal       int                // 1-based outcome ordinal within the call
	RunID         string             // the run
	Scope         string             // its scope key
	Class         WorkClass          // work class of the row before the outcome
	Disposition   OutcomeDisposition // outcome disposition
	Poison        bool               // the row was poisoned; no token
	Token         string             // new claim token of a lease
	ClaimAttempt  int                // claim_attempts after the outcome
	EligibleAt    time.Time          // wake_at (ready) or claimed_at (expired) before the outcome
	CheckpointSeq int64              // checkpoint_seq after the outcome
}

// Inspection is the trace record of one visit.
type Inspection struct {
	Visit        int         // 1-based visit ordinal
	Position     int64       // visited ring position
	Scope        string      // visited partition
	Disposition  Disposition // inspection disposition
	Outcomes     int         // outcomes of the visit
	EpochDelta   int64       // 1 for a grant, else 0
	CursorBefore int64       // call-local cursor before the visit
	CursorAfter  int64       // call-local cursor after the visit (= Position)
	// Parked mode only: Parked reports that the visit parked its partition
	// (an empty_page visit), ParkedUntil until when (zero: until a write),
	// and Woken the partitions the call's wake sweep unparked.
	Parked      bool
	ParkedUntil time.Time
	Woken       int
}

// ClaimResult is the result of one claim call of the model.
type ClaimResult struct {
	Demand       int          // the caller's demand
	CursorBefore int64        // durable cursor before the call
	CursorAfter  int64        // durable cursor after the call
	Outcomes     []Outcome    // in production order
	Inspections  []Inspection // one per visit
}

// Events converts the inspections of the call to checker events with the
// given call identity.
func (r ClaimResult) Events(call string) []Event {
	out := make([]Event, 0, len(r.Inspections))
	for _, in := range r.Inspections {
		out = append(out, Event{
			Call:         call,
			Visit:        in.Visit,
			Demand:       r.Demand,
			CursorBefore: in.CursorBefore,
			CursorAfter:  in.CursorAfter,
			Scope:        in.Scope,
			Position:     in.Position,
			Disposition:  in.Disposition,
			Outcomes:     in.Outcomes,
			EpochDelta:   in.EpochDelta,
			Parked:       in.Parked,
		})
	}
	return out
}

// Schedule is the schedule of a Commit.
type Schedule struct {
	Kind   ScheduleKind // what happens to the claim
	At     time.Time    // ReleaseAt only
	Status Status       // ReleaseTerminal only: done, failed or cancelled
}

// ScheduleKind selects what a Commit does with the claim.
type ScheduleKind int

// Commit schedules (docs/claim-algorithm.md, "Run states").
const (
	// RetainClaim keeps and refreshes the claim; marker kept.
	RetainClaim ScheduleKind = iota + 1
	// ReleaseImmediate is the cooperative yield: claim cleared, wake = now,
	// marker kept.
	ReleaseImmediate
	// ReleaseAt schedules the run at Schedule.At: claim and marker cleared.
	ReleaseAt
	// ReleaseExternal parks the run as waiting: claim and marker cleared.
	ReleaseExternal
	// ReleaseTerminal finishes the run with Schedule.Status: claim and
	// marker cleared.
	ReleaseTerminal
)
