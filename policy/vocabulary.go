package policy

// WorkClass is the work_class of an outcome: which kind of candidate it was.
// The docket package names this type docket.WorkClass.
type WorkClass string

// The work classes of outcomes.
const (
	// ClassAdmittedReady is due unclaimed work that already holds an admission.
	ClassAdmittedReady WorkClass = "admitted_ready"
	// ClassQueuedReady is due unclaimed work without an admission; under
	// TenantFair its lease is a promotion.
	ClassQueuedReady WorkClass = "queued_ready"
	// ClassExpired is a claim older than the cutoff, taken over.
	ClassExpired WorkClass = "expired"
)

// OutcomeDisposition is the trace disposition of one outcome.
type OutcomeDisposition string

// The outcome dispositions. A poison outcome carries the disposition of its
// candidate kind. Legacy ready outcomes carry none, because Legacy neither
// promotes nor reacquires admissions.
const (
	// OutcomeAdmittedReacquisition is an outcome of an admitted-ready row.
	OutcomeAdmittedReacquisition OutcomeDisposition = "admitted_reacquisition"
	// OutcomeQueuedPromotion is an outcome of the queued FIFO head.
	OutcomeQueuedPromotion OutcomeDisposition = "queued_promotion"
	// OutcomeExpiredRecovery is an outcome of an expired claim.
	OutcomeExpiredRecovery OutcomeDisposition = "expired_recovery"
)

// Disposition is the disposition of one TenantFair inspection.
type Disposition string

// The inspection dispositions. Only DispositionGrant is successful. A
// visit's lead rows are its frozen admitted-ready and expired rows and its
// frozen queued FIFO head; of the zero-outcome dispositions after
// DispositionEmptyPage the first that applies names the visit
// (docs/operations.md).
const (
	// DispositionGrant committed 1..Q outcomes.
	DispositionGrant Disposition = "grant"
	// DispositionPartitionLockSkip found the partition row locked.
	DispositionPartitionLockSkip Disposition = "partition_lock_skip"
	// DispositionEmptyPage found nothing to freeze.
	DispositionEmptyPage Disposition = "empty_page"
	// DispositionCapDebtDenial froze a queued row while the partition had
	// no free admission slot.
	DispositionCapDebtDenial Disposition = "cap_debt_denial"
	// DispositionDenied had a locked, fresh lead row the last-slot rule
	// withheld.
	DispositionDenied Disposition = "denied"
	// DispositionStale locked lead rows, all of which failed the recheck.
	DispositionStale Disposition = "stale"
	// DispositionLockMiss found every lead row held by another transaction.
	DispositionLockMiss Disposition = "lock_miss"
	// DispositionPaused locked a paused partition and ended there, reading
	// none of its pages.
	DispositionPaused Disposition = "paused"
	// DispositionRateLimited found the queued FIFO head in turn with a free
	// slot but no token of the partition's rate, and no other outcome.
	DispositionRateLimited Disposition = "rate_limited"
)

// The error_reason values of a refused claim call: the Reason of a
// docket.ClaimPolicyUnavailableError.
const (
	// ReasonReadOnlyTransaction: the call ran in a read-only transaction.
	ReasonReadOnlyTransaction = "read_only_transaction"
	// ReasonUnsupportedIsolation: the call ran above Read Committed.
	ReasonUnsupportedIsolation = "unsupported_isolation"
	// ReasonLockContention: the policy row stayed locked past the lock wait.
	ReasonLockContention = "lock_contention"
	// ReasonNotInitialized: no TenantFair startup has initialized the policy.
	ReasonNotInitialized = "not_initialized"
	// ReasonInactiveEngine: the engine is not the active admission mode.
	ReasonInactiveEngine = "inactive_engine"
	// ReasonMalformedPolicy: the policy row has an impossible shape.
	ReasonMalformedPolicy = "malformed_policy"
)

// The poison reasons a claim call may write.
const (
	// PoisonMaxClaimAttempts poisons a candidate whose attempts reached the limit.
	PoisonMaxClaimAttempts = "max_claim_attempts_exceeded"
)

// Preference is the advisory class preference of a demand-one claim: with a
// Limit (Demand) of 1 the engine serves the preferred class when it can and
// falls back to the other one. With a Limit of 2 or more each nonempty class
// is reserved one outcome instead, and the preference is ignored. The docket
// package names this type docket.Preference.
type Preference string

// The class preferences; PreferNone is SQL NULL.
const (
	// PreferNone leaves the class to age order.
	PreferNone Preference = ""
	// PreferReady prefers due unclaimed work.
	PreferReady Preference = "ready"
	// PreferExpired prefers recovering expired claims.
	PreferExpired Preference = "expired"
)

// Valid reports whether p is one of the three preferences.
func (p Preference) Valid() bool {
	return p == PreferNone || p == PreferReady || p == PreferExpired
}
