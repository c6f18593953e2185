package docket

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/policy"
)

// SQLSTATEs a claim statement can raise.
const (
	sqlstateLockNotAvailable      = "55P03"
	sqlstateInvalidParameterValue = "22023"
)

// execClaim runs a production plan on q through the engine's generated
// accessor. An AsyncCommit plan goes in a claim batch instead
// (Client.claimBatch), since its setting must share the claim's implicit
// transaction.
func execClaim(ctx context.Context, q *dbgen.Queries, st claimStatements, p claimpolicy.Plan) ([]claimpolicy.Row, error) {
	if p.Trace {
		return nil, fmt.Errorf("docket: a traced %s plan on the production path", p.Function)
	}
	if p.AsyncCommit {
		return nil, fmt.Errorf("docket: an asynchronous-commit %s plan outside a claim batch", p.Function)
	}
	return st.claim(ctx, q, p.Args)
}

// execClaimTrace runs a traced plan through the engine's generated accessor.
func execClaimTrace(ctx context.Context, q *dbgen.Queries, st claimStatements, p claimpolicy.Plan) ([]claimpolicy.TraceRow, error) {
	if !p.Trace {
		return nil, fmt.Errorf("docket: a production %s plan on the trace path", p.Function)
	}
	if p.AsyncCommit {
		return nil, fmt.Errorf("docket: an asynchronous-commit %s plan on the trace path", p.Function)
	}
	return st.trace(ctx, q, p.Args)
}

// claimError maps a failed claim call to the public errors: engine refusals
// and lock timeouts become *ClaimPolicyUnavailableError, rows outside the
// contract a schema mismatch.
func claimError(err error) error {
	if unavailable, ok := errors.AsType[*claimpolicy.UnavailableError](err); ok {
		return &ClaimPolicyUnavailableError{Reason: unavailable.Reason}
	}
	if errors.Is(err, claimpolicy.ErrMalformedRow) {
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
