package docket

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
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

// ClaimTrace is the trusted, identity-bearing trace of one claim call: the
// result ClaimDue would return plus the internal view of every outcome and,
// for TenantFair, of every visit. Never use it as a metric label.
type ClaimTrace struct {
	// Result is what ClaimDue would have returned.
	Result ClaimResult
	// Outcomes lists every lease and poison in commit order.
	Outcomes []TracedOutcome
	// Inspections lists the TenantFair visits in order (none for Legacy).
	Inspections []ClaimInspection
}

// TracedOutcome is one outcome with its place in the call.
type TracedOutcome struct {
	RunID    string
	Scope    Scope
	Class    WorkClass
	Poisoned bool
	// Visit is the visit that produced it (0 for Legacy); Ordinal numbers
	// the outcomes of the call from 1.
	Visit   int
	Ordinal int
	// Disposition is admitted_reacquisition, queued_promotion or
	// expired_recovery ("" for Legacy ready outcomes).
	Disposition string
	// CallToken and TransactionID identify the call.
	CallToken     uuid.UUID
	TransactionID int64
}

// ClaimInspection is one TenantFair visit: position, cursor movement,
// disposition and the grant it made, if any.
type ClaimInspection = policy.Inspection

// TraceClaimDue is ClaimDue with the claim function's trace mode on. It
// commits exactly like ClaimDue; only trusted inspection and tests should
// call it.
func (c *Client) TraceClaimDue(ctx context.Context, req ClaimRequest) (ClaimTrace, error) {
	return c.traceClaimDue(ctx, c.queries, req)
}

// TraceClaimDueTx is TraceClaimDue inside the caller's transaction.
func (c *Client) TraceClaimDueTx(ctx context.Context, tx pgx.Tx, req ClaimRequest) (ClaimTrace, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return ClaimTrace{}, err
	}
	return c.traceClaimDue(ctx, q, req)
}

func (c *Client) traceClaimDue(ctx context.Context, q *dbgen.Queries, req ClaimRequest) (ClaimTrace, error) {
	preq, err := claimRequest(req, true)
	if err != nil {
		return ClaimTrace{}, err
	}
	sp := c.startClaimSpan(ctx, preq, spanEveryCall)
	start := time.Now()
	rows, err := execClaimTrace(ctx, q, c.engine.statements, c.engine.Plan(preq))
	var tr claimpolicy.Trace
	if err == nil {
		tr, err = c.engine.DecodeTrace(rows)
	}
	c.observeClaim(ctx, start, preq, tr.Result, err)
	if err != nil {
		err = claimError(err)
		sp.end(ClaimResult{}, err)
		return ClaimTrace{}, err
	}
	out := ClaimTrace{Result: claimResultOf(tr.Result), Inspections: tr.Inspections}
	sp.end(out.Result, nil)
	for i, o := range tr.Result.Outcomes {
		ot := tr.Outcomes[i]
		out.Outcomes = append(out.Outcomes, TracedOutcome{
			RunID:         o.RunID,
			Scope:         scopeOf(o.TenantID),
			Class:         o.Class,
			Poisoned:      o.Poisoned,
			Visit:         ot.Visit,
			Ordinal:       ot.Ordinal,
			Disposition:   string(ot.Disposition),
			CallToken:     ot.CallToken,
			TransactionID: ot.TransactionID,
		})
	}
	return out, nil
}
