package docket

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

// claimSpanning says which claim calls record a docket.claim span.
type claimSpanning int

const (
	// spanEveryCall records one span per call that reached the claim
	// statement: an application's ClaimDue, ClaimDueTx and TraceClaimDue.
	spanEveryCall claimSpanning = iota
	// spanOutcomeCalls records a span only for a call that leased or
	// poisoned a run, or failed: the Worker's claim calls, of which an idle
	// Worker makes one per poll, each with nothing to show.
	spanOutcomeCalls
)

// claimSpan is the docket.claim span of one claim call. A call of
// spanOutcomeCalls starts its span only once it knows it records one,
// backdated to the call's start, since a started span cannot be dropped.
// The zero claimSpan (no TracerProvider) records nothing.
type claimSpan struct {
	c     *Client
	ctx   context.Context
	req   claimpolicy.Request
	start time.Time
	sp    *span
}

// startClaimSpan begins the docket.claim span of one claim call of
// spanning that passed validation, so its statement is about to run.
func (c *Client) startClaimSpan(ctx context.Context, req claimpolicy.Request, spanning claimSpanning) claimSpan {
	if c.tracer == nil {
		return claimSpan{}
	}
	cs := claimSpan{c: c, ctx: ctx, req: req, start: time.Now()}
	if spanning == spanEveryCall {
		_, cs.sp = c.startSpan(ctx, spanClaim, trace.SpanKindClient, cs.attrs())
	}
	return cs
}

// attrs are the attributes a claim span has from its start.
func (cs claimSpan) attrs() trace.SpanStartOption {
	return trace.WithAttributes(spanAttrEngine.String(cs.c.engine.Name()), spanAttrDemand.Int(int(cs.req.Demand)))
}

// end ends the span of a claim call that returned res, or failed with err.
func (cs claimSpan) end(res ClaimResult, err error) {
	if cs.c == nil {
		return
	}
	sp := cs.sp
	if sp == nil {
		if err == nil && res.Outcomes() == 0 {
			return
		}
		_, sp = cs.c.startSpan(cs.ctx, spanClaim, trace.SpanKindClient, cs.attrs(), trace.WithTimestamp(cs.start))
	}
	if err != nil {
		sp.end(err)
		return
	}
	sp.set(spanAttrOutcomes.Int(res.Outcomes()), spanAttrLeases.Int(len(res.Leases)), spanAttrPoisoned.Int(len(res.Poisoned)))
	sp.end(nil)
}
