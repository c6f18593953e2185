package docket

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/policy"
)

// startClaimSpan starts the docket.claim span of one claim call that passed
// validation, so its statement is about to run.
func (c *Client) startClaimSpan(ctx context.Context, req policy.Request) (context.Context, *span) {
	return c.startSpan(ctx, spanClaim, trace.SpanKindClient, trace.WithAttributes(
		spanAttrEngine.String(c.engine.Name()),
		spanAttrDemand.Int(int(req.Demand))))
}

// endClaimSpan ends the span of a claim call that returned res.
func endClaimSpan(sp *span, res ClaimResult) {
	sp.set(spanAttrOutcomes.Int(res.Outcomes()), spanAttrLeases.Int(len(res.Leases)), spanAttrPoisoned.Int(len(res.Poisoned)))
	sp.end(nil)
}
