package docket

import (
	"context"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/policy"
)

// engine is the resolved admission engine, one of the closed set
// Config.ClaimPolicy accepts (resolveEngine is the only place that names
// them). Every decision that depends on which engine serves the domain is
// made there, once, and read from these fields after: the claim statements
// to run, whether the engine walks the fair ring, and how startup persists
// it.
type engine struct {
	// Engine plans, decodes and observes the engine's calls.
	claimpolicy.Engine
	// configured is the engine as Client.Policy reports it.
	configured policy.ClaimPolicy
	// tenantFair says whether the engine walks the TenantFair ring: the
	// Worker sweeps it, and every expired claim it poisons held an admission.
	tenantFair bool
	// statements are the generated claim statements of the engine's function.
	statements claimStatements
	// synchronize persists the engine in the locked singleton policy row.
	synchronize func(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy) error
}

// claimStatements are the generated statements of one claim function.
type claimStatements struct {
	// claim runs a production call through the generated accessor; claimSQL
	// is its text, for a claim batch.
	claim    func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.Row, error)
	claimSQL string
	// trace runs a traced call through the generated accessor.
	trace func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.TraceRow, error)
	// noted is the SQL of the Worker's claim-batch statement, which notes
	// the runs it leases.
	noted string
}

// legacyEngine is the Legacy engine.
func legacyEngine() engine {
	return engine{
		Engine:     claimpolicy.Legacy{},
		configured: policy.Legacy{},
		statements: claimStatements{
			claim: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.Row, error) {
				rows, err := q.LegacyClaim(ctx, dbgen.LegacyClaimParams(a))
				return convertRows(rows, err, func(r dbgen.LegacyClaimRow) claimpolicy.Row { return claimpolicy.Row(r) })
			},
			trace: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.TraceRow, error) {
				rows, err := q.LegacyClaimTrace(ctx, dbgen.LegacyClaimTraceParams(a))
				return convertRows(rows, err, func(r dbgen.LegacyClaimTraceRow) claimpolicy.TraceRow { return claimpolicy.TraceRow(r) })
			},
			claimSQL: dbgen.LegacyClaim,
			noted:    dbgen.LegacyClaimNoted,
		},
		synchronize: synchronizeLegacy,
	}
}

// tenantFairEngine is the TenantFair engine configured by p, already
// validated.
func tenantFairEngine(p policy.TenantFair) engine {
	return engine{
		Engine:     claimpolicy.TenantFair{},
		configured: p,
		tenantFair: true,
		statements: claimStatements{
			claim: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.Row, error) {
				rows, err := q.TenantFairClaim(ctx, dbgen.TenantFairClaimParams(a))
				return convertRows(rows, err, func(r dbgen.TenantFairClaimRow) claimpolicy.Row { return claimpolicy.Row(r) })
			},
			trace: func(ctx context.Context, q *dbgen.Queries, a claimpolicy.Args) ([]claimpolicy.TraceRow, error) {
				rows, err := q.TenantFairClaimTrace(ctx, dbgen.TenantFairClaimTraceParams(a))
				return convertRows(rows, err, func(r dbgen.TenantFairClaimTraceRow) claimpolicy.TraceRow { return claimpolicy.TraceRow(r) })
			},
			claimSQL: dbgen.TenantFairClaim,
			noted:    dbgen.TenantFairClaimNoted,
		},
		synchronize: func(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy) error {
			return synchronizeTenantFair(ctx, q, row, p)
		},
	}
}

// convertRows converts the rows of a generated accessor, passing its error on.
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
