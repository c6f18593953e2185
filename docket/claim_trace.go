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
