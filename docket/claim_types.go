package docket

import (
	"time"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/policy"
)

// Preference is the advisory class preference of a demand-one claim; see
// policy.Preference, which it names.
type Preference = policy.Preference

// The class preferences.
const (
	// PreferNone orders by age.
	PreferNone = policy.PreferNone
	// PreferReady prefers due unclaimed work.
	PreferReady = policy.PreferReady
	// PreferExpired prefers recovering expired claims.
	PreferExpired = policy.PreferExpired
)

// WorkClass says which kind of candidate an outcome came from; see
// policy.WorkClass, which it names.
type WorkClass = policy.WorkClass

// The work classes.
const (
	// ClassAdmittedReady is due work that already held an admission.
	ClassAdmittedReady = policy.ClassAdmittedReady
	// ClassQueuedReady is due work without an admission; under TenantFair
	// its lease is a promotion.
	ClassQueuedReady = policy.ClassQueuedReady
	// ClassExpired is a claim older than the orphan TTL, taken over.
	ClassExpired = policy.ClassExpired
)

// ClaimRequest asks ClaimDue for up to Limit outcomes.
type ClaimRequest struct {
	// Now is the claim time: work with wake_at <= Now is due and every
	// lease gets claimed_at = Now. Required; Now and Now - ClaimTTL must be
	// times PostgreSQL's timestamptz can hold (4714-11-24 BC to 294276-12-31
	// AD, UTC).
	Now time.Time
	// Limit is the demand, in 1..2147483647. One call returns at most 256
	// outcomes whatever the limit.
	Limit int
	// ClaimTTL is the claim age after which a claim is expired and may be
	// stolen: claims with claimed_at < Now - ClaimTTL. Must be >= 0.
	ClaimTTL time.Duration
	// MaxClaimAttempts poisons instead of leasing a candidate whose claim
	// attempts already reached it, in 1..2147483647.
	MaxClaimAttempts int
	// Preference is the demand-one class preference.
	Preference Preference
}

// Lease is a claim handed to its holder. Lifecycle calls identify it by
// Holder() and fence commits with CheckpointSeq.
type Lease struct {
	RunID string
	// Scope is the run's owner (Tenantless for a run without tenant).
	Scope     Scope
	GraphID   string
	GraphHash string
	// CheckpointSeq is the commit fence the holder's first commit expects.
	CheckpointSeq int64
	// ClaimToken is the new claim token; it proves the claim.
	ClaimToken uuid.UUID
	// ClaimedAt is the request's Now.
	ClaimedAt time.Time
	// Attempt is the run's claim_attempts including this lease.
	Attempt int
	// Class is the kind of candidate the lease came from.
	Class WorkClass
	// EligibleAt is the wake_at (ready) or old claimed_at (expired) that
	// made the run eligible.
	EligibleAt time.Time
}

// Holder returns the holder identity of the lease for lifecycle calls.
func (l Lease) Holder() Holder {
	return Holder{Scope: l.Scope, RunID: l.RunID, Token: l.ClaimToken}
}

// PoisonedRun is a candidate the claim call poisoned instead of leasing,
// because its claim attempts reached MaxClaimAttempts. It holds no claim and
// no admission; an operator may retry it.
type PoisonedRun struct {
	RunID         string
	Scope         Scope
	GraphID       string
	GraphHash     string
	CheckpointSeq int64
	// Attempts is the run's claim_attempts, unchanged by the poison.
	Attempts int
	Class    WorkClass
	// EligibleAt is as for Lease.
	EligibleAt time.Time
	// PoisonedAt is the request's Now; Reason is max_claim_attempts_exceeded.
	PoisonedAt time.Time
	Reason     string
}

// ClaimResult holds the outcomes of one claim call, each list in the order
// the call committed them. Poisons count against the limit.
type ClaimResult struct {
	Leases   []Lease
	Poisoned []PoisonedRun
}

// Outcomes is the number of leases plus poisons.
func (r ClaimResult) Outcomes() int { return len(r.Leases) + len(r.Poisoned) }

// claimResultOf converts decoded outcomes to the public result.
func claimResultOf(res claimpolicy.Result) ClaimResult {
	var out ClaimResult
	for _, o := range res.Outcomes {
		if o.Poisoned {
			out.Poisoned = append(out.Poisoned, PoisonedRun{
				RunID:         o.RunID,
				Scope:         scopeOf(o.TenantID),
				GraphID:       o.GraphID,
				GraphHash:     o.GraphHash,
				CheckpointSeq: o.CheckpointSeq,
				Attempts:      o.Attempt,
				Class:         o.Class,
				EligibleAt:    o.EligibleAt,
				PoisonedAt:    o.PoisonedAt,
				Reason:        o.PoisonReason,
			})
			continue
		}
		out.Leases = append(out.Leases, Lease{
			RunID:         o.RunID,
			Scope:         scopeOf(o.TenantID),
			GraphID:       o.GraphID,
			GraphHash:     o.GraphHash,
			CheckpointSeq: o.CheckpointSeq,
			ClaimToken:    o.ClaimToken,
			ClaimedAt:     o.ClaimedAt,
			Attempt:       o.Attempt,
			Class:         o.Class,
			EligibleAt:    o.EligibleAt,
		})
	}
	return out
}
