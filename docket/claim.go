package docket

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

// ClaimDue is the only admission entrypoint: one claim statement of the
// client's engine (TenantFair or Legacy) that leases or poisons up to
// req.Limit due or expired runs and commits on its own. An engine that
// refuses the call changes nothing and returns a *ClaimPolicyUnavailableError
// (errors.Is matches ErrNotInitialized and ErrInactiveEngine for those
// reasons). An invalid request is refused before any SQL with
// ErrInvalidArgument. With Config.AsyncClaimCommit the statement goes in one
// batch after a local synchronous_commit off, so its implicit transaction
// commits without waiting for its WAL flush.
func (c *Client) ClaimDue(ctx context.Context, req ClaimRequest) (ClaimResult, error) {
	return c.claimWith(ctx, req, c.config.AsyncClaimCommit, spanEveryCall, func(p claimpolicy.Plan) ([]claimpolicy.Row, error) {
		if p.AsyncCommit {
			return c.claimBatch(ctx, p, c.engine.statements.claimSQL, nil, nil)
		}
		return execClaim(ctx, c.queries, c.engine.statements, p)
	})
}

// ClaimDueTx is ClaimDue inside the caller's transaction, which must be a
// writable Read Committed transaction: the claim, the cursor movement and the
// admission epochs commit or roll back with it. Config.AsyncClaimCommit does
// not apply: the transaction's commit is the caller's.
func (c *Client) ClaimDueTx(ctx context.Context, tx pgx.Tx, req ClaimRequest) (ClaimResult, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return ClaimResult{}, err
	}
	return c.claimWith(ctx, req, false, spanEveryCall, func(p claimpolicy.Plan) ([]claimpolicy.Row, error) {
		return execClaim(ctx, q, c.engine.statements, p)
	})
}

// claimWith validates req, runs its production plan through exec, decodes
// and observes the result, records its span as spanning says and maps the
// errors of the public API.
func (c *Client) claimWith(ctx context.Context, req ClaimRequest, asyncCommit bool, spanning claimSpanning,
	exec func(claimpolicy.Plan) ([]claimpolicy.Row, error)) (ClaimResult, error) {
	preq, err := claimRequest(req, false)
	if err != nil {
		return ClaimResult{}, err
	}
	preq.AsyncCommit = asyncCommit
	sp := c.startClaimSpan(ctx, preq, spanning)
	start := time.Now()
	rows, err := exec(c.engine.Plan(preq))
	var res claimpolicy.Result
	if err == nil {
		res, err = c.engine.Decode(rows)
	}
	c.observeClaim(ctx, start, preq, res, err)
	if err != nil {
		err = claimError(err)
		sp.end(ClaimResult{}, err)
		return ClaimResult{}, err
	}
	out := claimResultOf(res)
	sp.end(out, nil)
	return out, nil
}

// claimRequest validates req and converts it to the engine's units.
func claimRequest(req ClaimRequest, trace bool) (claimpolicy.Request, error) {
	switch {
	case req.Now.IsZero():
		return claimpolicy.Request{}, invalidArgument("claim Now is the zero time")
	case req.Limit < 1 || req.Limit > math.MaxInt32:
		return claimpolicy.Request{}, invalidArgument("claim Limit %d is outside 1..%d", req.Limit, math.MaxInt32)
	case req.ClaimTTL < 0:
		return claimpolicy.Request{}, invalidArgument("claim ClaimTTL %v is negative", req.ClaimTTL)
	case req.MaxClaimAttempts < 1 || req.MaxClaimAttempts > math.MaxInt32:
		return claimpolicy.Request{}, invalidArgument("claim MaxClaimAttempts %d is outside 1..%d", req.MaxClaimAttempts, math.MaxInt32)
	case !req.Preference.Valid():
		return claimpolicy.Request{}, invalidArgument("claim Preference %q is none of \"\", \"ready\", \"expired\"", string(req.Preference))
	}
	cutoff := req.Now.Add(-req.ClaimTTL)
	if err := requireStorableTime("claim Now", req.Now); err != nil {
		return claimpolicy.Request{}, err
	}
	if err := requireStorableTime("claim Now minus ClaimTTL", cutoff); err != nil {
		return claimpolicy.Request{}, err
	}
	return claimpolicy.Request{
		Now:         req.Now,
		Cutoff:      cutoff,
		Demand:      int32(req.Limit),
		MaxAttempts: int32(req.MaxClaimAttempts),
		Preference:  req.Preference,
		Trace:       trace,
	}, nil
}
