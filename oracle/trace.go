package oracle

// Disposition is the disposition of one inspection (docs/claim-algorithm.md,
// "Inspection dispositions").
type Disposition string

// Inspection dispositions. Only DispGrant is successful. A visit's lead
// rows are its frozen admitted-ready and expired rows and its frozen queued
// FIFO head; of the zero-outcome dispositions after DispEmptyPage the first
// that applies names the visit (docs/operations.md).
const (
	// DispGrant is a visit that committed 1..Q outcomes.
	DispGrant Disposition = "grant"
	// DispPartitionLockSkip is a visit whose partition row was locked.
	DispPartitionLockSkip Disposition = "partition_lock_skip"
	// DispEmptyPage is a visit whose ready and expired pages were both empty.
	DispEmptyPage Disposition = "empty_page"
	// DispCapDebtDenial is a zero-outcome visit that froze a queued row
	// while its partition had no free admission slot.
	DispCapDebtDenial Disposition = "cap_debt_denial"
	// DispDenied is a zero-outcome visit with a locked, fresh lead row that
	// the last-slot rule withheld.
	DispDenied Disposition = "denied"
	// DispStale is a zero-outcome visit that locked lead rows, all of which
	// failed the recheck.
	DispStale Disposition = "stale"
	// DispLockMiss is a zero-outcome visit whose lead rows were all held by
	// other transactions.
	DispLockMiss Disposition = "lock_miss"
	// DispPaused is a visit of a paused partition: it grants nothing and
	// reads none of the partition's pages.
	DispPaused Disposition = "paused"
	// DispRateLimited is a zero-outcome visit whose queued FIFO head in
	// turn had a free slot but no token of the partition's rate.
	DispRateLimited Disposition = "rate_limited"
)

// Valid reports whether d is one of the inspection dispositions.
func (d Disposition) Valid() bool {
	switch d {
	case DispGrant, DispPartitionLockSkip, DispEmptyPage, DispLockMiss,
		DispStale, DispCapDebtDenial, DispDenied, DispPaused, DispRateLimited:
		return true
	}
	return false
}

// Event is one committed inspection of a TenantFair claim call, as recorded
// by the trace rows of docket_tenant_fair_claim (row_kind = 'inspection').
// Events are given in commit order: all inspections of one call are adjacent
// and ordered by Visit, and calls appear in the order they committed. Every
// call must be complete (all of its inspections present).
type Event struct {
	// Call identifies the claim call (call token or ordinal); consecutive
	// events with the same Call belong to one call.
	Call string
	// Visit is the 1-based visit ordinal within the call.
	Visit int
	// Demand is the caller's demand of the call (the same on every visit).
	Demand int
	// CursorBefore is the call-local cursor immediately before this visit:
	// the durable scan_ring_position for visit 1, else the position of the
	// previous visit of the same call.
	CursorBefore int64
	// CursorAfter is the call-local cursor after this visit; it equals
	// Position.
	CursorAfter int64
	// Scope is the scope key of the visited partition ("" is tenantless).
	Scope string
	// Position is the ring position of the visited partition.
	Position int64
	// Disposition is the inspection disposition.
	Disposition Disposition
	// Outcomes is the number of outcomes the inspection committed.
	Outcomes int
	// EpochDelta is the change of the partition's admission_epoch.
	EpochDelta int64
	// Parked reports that the visit parked its partition (parked mode; an
	// empty_page visit).
	Parked bool
}

// Window describes one eligible fixed qualification window
// (docs/claim-algorithm.md, "The window"): target partition t, fixed cohort
// P, fixed ring C and the budgets. The events given to Check start at the
// window opening.
type Window struct {
	// Target is the scope key of the low-volume target partition t.
	Target string
	// Cohort is P: t plus every partition allowed to grant before t. It is
	// a set; duplicates are ignored. It must contain Target.
	Cohort []string
	// Ring is C: ring position -> scope key for every position with a
	// positive unfinished count during the window. It must contain P.
	Ring map[int64]string
	// S is the number of inspections of an unfilled call (32 in production).
	S int
	// Q is the maximum number of outcomes per grant (8 in production).
	Q int
	// L is the supplied maximum number of consecutive failed target
	// inspections.
	L int
	// Parked checks a parked-mode window (docs/fairness-parked.md): C is
	// then the unfinished ring and Asleep the positions of C that are
	// parked at the opening; see Check.
	Parked bool
	Asleep []int64
	// Paused are the scopes of C that an operator paused for the whole
	// window: they are not eligible work, so the target cannot be one of
	// them, and every visit of one must be refused (DispPaused). Each such
	// visit still consumes one inspection of its call.
	Paused []string
}

// Observed holds the counts the checker observed.
type Observed struct {
	// Events is the number of events examined.
	Events int
	// Calls is the number of calls in the trace.
	Calls int
	// Bounds are the bounds computed from the window (zero for
	// CheckMechanics).
	Bounds BoundSet
	// TargetGranted reports whether the target committed a grant.
	TargetGranted bool
	// TargetGrantEvent is the index of the target's first grant, or -1.
	TargetGrantEvent int
	// CompetingGrants counts grants to other partitions strictly before the
	// target grant.
	CompetingGrants int64
	// CompetingOutcomes counts the outcomes of those grants.
	CompetingOutcomes int64
	// QualifyingCalls counts calls through and including the target-grant
	// call (all calls when the target has not granted).
	QualifyingCalls int64
	// TargetInspections counts target inspections through the target grant.
	TargetInspections int
	// FailedTargetInspections counts failed target inspections before the
	// target grant.
	FailedTargetInspections int
	// MaxConsecutiveFailedTarget is the longest run of consecutive failed
	// target inspections before the target grant.
	MaxConsecutiveFailedTarget int
	// CompetitorGrants counts grants per competitor scope before the target
	// grant.
	CompetitorGrants map[string]int
	// MaxCompetitorGrantsPerRound is the largest number of grants one
	// competitor received before the first target inspection or between
	// consecutive target inspections.
	MaxCompetitorGrantsPerRound int
	// GrantingCohort is the minimal cohort actually observed: the target
	// plus every scope that granted before it, sorted.
	GrantingCohort []string
	// Grants counts all grants in the trace, Outcomes all their outcomes.
	Grants, Outcomes int64
}
