package oracle

import (
	"errors"
	"fmt"
)

// Invariant names the rule a trace violated.
type Invariant string

// The rules the checker enforces. The numbered ones are the scheduler
// invariants 1-5 of docs/claim-algorithm.md, "What oracle.Check verifies".
const (
	// InvSerializedCursor is invariant 1: one durable cursor serialized
	// across all pollers; calls do not interleave and each call starts at the
	// cursor the previous call left.
	InvSerializedCursor Invariant = "1"
	// InvContiguousCursor is invariant 2: every inspection visits the next
	// position of C after the cursor (ascending, cyclic) and moves the cursor
	// to it; no position is skipped or repeated.
	InvContiguousCursor Invariant = "2"
	// InvStopOrExhaust is invariant 3: filling demand stops the call
	// immediately; otherwise the call consumes exactly S inspections.
	InvStopOrExhaust Invariant = "3"
	// InvCompetitorOnce is invariant 4: before the first target inspection
	// and between consecutive target inspections each competitor receives at
	// most one grant.
	InvCompetitorOnce Invariant = "4"
	// InvTargetFailures is invariant 5: at most L consecutive target
	// inspections fail.
	InvTargetFailures Invariant = "5"
	// InvGrantUnit is the unit rule: a grant has 1..Q outcomes and advances
	// admission_epoch exactly once; an unsuccessful inspection has no
	// outcome and no epoch change.
	InvGrantUnit Invariant = "grant-unit"
	// InvCohort is the window rule that no partition outside P grants before
	// the target.
	InvCohort Invariant = "cohort"
	// InvBoundGrants is the competing-grants bound (L+1)(A-1).
	InvBoundGrants Invariant = "bound-competing-grants"
	// InvBoundOutcomes is the competing-outcomes bound Q(L+1)(A-1).
	InvBoundOutcomes Invariant = "bound-competing-outcomes"
	// InvBoundCalls is the qualifying-calls bound
	// (L+1)((A-1) + ceil((H-A+1)/S)).
	InvBoundCalls Invariant = "bound-qualifying-calls"
	// InvPaused is the pause rule: a visit of a partition paused for the
	// window is refused with DispPaused and grants nothing.
	InvPaused Invariant = "paused"
	// InvTargetToken is the token rule: an eligible window's target has a
	// token of its rate, so no target visit is refused as DispRateLimited.
	InvTargetToken Invariant = "target-token"
	// InvRate is the rate guarantee: a partition's promotions i < j under
	// one Rate are at least (j - i - Burst) steps apart (CheckRate).
	InvRate Invariant = "rate"
	// InvEventShape reports a malformed event (unknown disposition, scope
	// not matching its ring position, inconsistent demand, negative counts).
	InvEventShape Invariant = "event-shape"
)

// ErrViolation is matched (errors.Is) by every *Violation.
var ErrViolation = errors.New("oracle: trace violation")

// Violation reports the first rule a trace broke and the event that broke it.
type Violation struct {
	Invariant Invariant // the violated rule
	Event     int       // index into the events given to the checker
	Message   string    // human-readable detail
}

// Error implements error.
func (v *Violation) Error() string {
	return fmt.Sprintf("oracle: invariant %s violated at event %d: %s", v.Invariant, v.Event, v.Message)
}

// Is makes errors.Is(err, ErrViolation) true.
func (v *Violation) Is(target error) bool { return target == ErrViolation }

// ErrInvalidWindow is matched (errors.Is) by every *WindowError.
var ErrInvalidWindow = errors.New("oracle: invalid window")

// WindowError reports an invalid Window or ring given to the checker.
type WindowError struct {
	Field  string // the offending field, e.g. "Ring" or "Cohort"
	Reason string // what is wrong
}

// Error implements error.
func (e *WindowError) Error() string {
	return fmt.Sprintf("oracle: invalid window %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidWindow) true.
func (e *WindowError) Is(target error) bool { return target == ErrInvalidWindow }

// violation builds a *Violation.
func violation(inv Invariant, event int, format string, args ...any) *Violation {
	return &Violation{Invariant: inv, Event: event, Message: fmt.Sprintf(format, args...)}
}
