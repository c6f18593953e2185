package docket

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
)

// SQLSTATEs a claim statement can raise.
const (
	sqlstateLockNotAvailable      = "55P03"
	sqlstateInvalidParameterValue = "22023"
)

// execClaim runs a production plan through its generated accessor: the
// asynchronous-commit variant when the plan asks for it.
func execClaim(ctx context.Context, q *gen.Queries, p policy.Plan) ([]policy.Row, error) {
	if p.Trace {
		return nil, fmt.Errorf("docket: a traced %s plan on the production path", p.Function)
	}
	if p.AsyncCommit {
		return execClaimAsyncCommit(ctx, q, p)
	}
	switch p.Function {
	case policy.FunctionTenantFair:
		rows, err := q.TenantFairClaim(ctx, gen.TenantFairClaimParams(p.Args))
		return convertRows(rows, err, func(r gen.TenantFairClaimRow) policy.Row { return policy.Row(r) })
	case policy.FunctionLegacy:
		rows, err := q.LegacyClaim(ctx, gen.LegacyClaimParams(p.Args))
		return convertRows(rows, err, func(r gen.LegacyClaimRow) policy.Row { return policy.Row(r) })
	}
	return nil, fmt.Errorf("docket: unknown claim function %d", p.Function)
}

// execClaimAsyncCommit runs a production plan through the accessor that turns
// synchronous_commit off for the statement's own implicit transaction.
func execClaimAsyncCommit(ctx context.Context, q *gen.Queries, p policy.Plan) ([]policy.Row, error) {
	switch p.Function {
	case policy.FunctionTenantFair:
		rows, err := q.TenantFairClaimAsyncCommit(ctx, gen.TenantFairClaimAsyncCommitParams(p.Args))
		return convertRows(rows, err, func(r gen.TenantFairClaimAsyncCommitRow) policy.Row { return policy.Row(r) })
	case policy.FunctionLegacy:
		rows, err := q.LegacyClaimAsyncCommit(ctx, gen.LegacyClaimAsyncCommitParams(p.Args))
		return convertRows(rows, err, func(r gen.LegacyClaimAsyncCommitRow) policy.Row { return policy.Row(r) })
	}
	return nil, fmt.Errorf("docket: unknown claim function %d", p.Function)
}

// execClaimTrace runs a traced plan through its generated accessor.
func execClaimTrace(ctx context.Context, q *gen.Queries, p policy.Plan) ([]policy.TraceRow, error) {
	if !p.Trace {
		return nil, fmt.Errorf("docket: a production %s plan on the trace path", p.Function)
	}
	if p.AsyncCommit {
		return nil, fmt.Errorf("docket: an asynchronous-commit %s plan on the trace path", p.Function)
	}
	switch p.Function {
	case policy.FunctionTenantFair:
		rows, err := q.TenantFairClaimTrace(ctx, gen.TenantFairClaimTraceParams(p.Args))
		return convertRows(rows, err, func(r gen.TenantFairClaimTraceRow) policy.TraceRow { return policy.TraceRow(r) })
	case policy.FunctionLegacy:
		rows, err := q.LegacyClaimTrace(ctx, gen.LegacyClaimTraceParams(p.Args))
		return convertRows(rows, err, func(r gen.LegacyClaimTraceRow) policy.TraceRow { return policy.TraceRow(r) })
	}
	return nil, fmt.Errorf("docket: unknown claim function %d", p.Function)
}

func convertRows[From, To any](rows []From, err error, convert func(From) To) ([]To, error) {
	if err != nil {
		return nil, err
	}
	out := make([]To, len(rows))
	for i, r := range rows {
		out[i] = convert(r)
	}
	return out, nil
}

// claimError maps a failed claim call to the public errors: engine refusals
// and lock timeouts become *ClaimPolicyUnavailableError, rows outside the
// contract a schema mismatch.
func claimError(err error) error {
	if unavailable, ok := errors.AsType[*policy.UnavailableError](err); ok {
		return &ClaimPolicyUnavailableError{Reason: unavailable.Reason}
	}
	if errors.Is(err, policy.ErrMalformedRow) {
		return fmt.Errorf("%w: %w", ErrSchemaMismatch, err)
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case sqlstateLockNotAvailable:
			return &ClaimPolicyUnavailableError{Reason: policy.ReasonLockContention}
		case sqlstateInvalidParameterValue:
			return fmt.Errorf("%w: %w", ErrInvalidArgument, err)
		}
	}
	return fmt.Errorf("docket: claim: %w", err)
}
