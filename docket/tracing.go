package docket

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

// tracerName is the instrumentation scope of every Docket span, the same as
// the metrics'.
const tracerName = meterName

// The span names; docs/telemetry.md lists their attributes.
const (
	spanInsert  = "docket.insert"
	spanClaim   = "docket.claim"
	spanHandler = "docket.handler"
	spanCommit  = "docket.commit"
)

// The span attribute keys. Unlike metric attributes they may carry run and
// tenant identity: a span describes one operation, not an aggregate.
const (
	spanAttrRunsCount = attribute.Key("docket.runs.count")
	spanAttrRunID     = attribute.Key("docket.run_id")
	spanAttrTenantID  = attribute.Key("docket.tenant_id")
	spanAttrGraphID   = attribute.Key("docket.graph_id")
	spanAttrEngine    = attribute.Key("docket.claim.engine")
	spanAttrDemand    = attribute.Key("docket.claim.demand")
	spanAttrOutcomes  = attribute.Key("docket.claim.outcomes")
	spanAttrLeases    = attribute.Key("docket.claim.leases")
	spanAttrPoisoned  = attribute.Key("docket.claim.poisoned")
	spanAttrStep      = attribute.Key("docket.step")
	spanAttrAttempt   = attribute.Key("docket.attempt")
	spanAttrVerdict   = attribute.Key("docket.verdict")
	spanAttrFenced    = attribute.Key("docket.commit.fenced")
	spanAttrOutcome   = attribute.Key("docket.commit.outcome")
	spanAttrBatchSize = attribute.Key("docket.commit.batch_size")
)

// traceContext is the propagator of the trace context stored with a run.
var traceContext propagation.TraceContext

// newTracer returns the tracer of tp, or nil when tp is nil: a nil tracer
// starts no span, and each would-be span then costs one nil check.
func newTracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	return tp.Tracer(tracerName)
}

// span is one Docket span; a nil *span (no TracerProvider) ignores every call.
type span struct{ s trace.Span }

// startSpan starts the span name as a child of ctx's span and returns the
// context that carries it; with no tracer it returns ctx and a nil span.
func (c *Client) startSpan(ctx context.Context, name string, kind trace.SpanKind, opts ...trace.SpanStartOption) (context.Context, *span) {
	if c.tracer == nil {
		return ctx, nil
	}
	ctx, s := c.tracer.Start(ctx, name, append(opts, trace.WithSpanKind(kind))...)
	return ctx, &span{s: s}
}

// set adds attributes.
func (s *span) set(attrs ...attribute.KeyValue) {
	if s != nil {
		s.s.SetAttributes(attrs...)
	}
}

// fail records err and sets the status Error with msg.
func (s *span) fail(err error, msg string) {
	if s == nil {
		return
	}
	if err != nil {
		s.s.RecordError(err)
	}
	s.s.SetStatus(codes.Error, msg)
}

// end ends the span, first recording err, if any, as its error.
func (s *span) end(err error) {
	if s == nil {
		return
	}
	if err != nil {
		s.fail(err, err.Error())
	}
	s.s.End()
}

// runAttrs are the identity attributes of one run's span: the tenant only
// for a tenant's run.
func runAttrs(runID string, scope Scope, graphID string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{spanAttrRunID.String(runID), spanAttrGraphID.String(graphID)}
	if tenant, ok := scope.TenantID(); ok {
		attrs = append(attrs, spanAttrTenantID.String(tenant))
	}
	return attrs
}

// injectTraceContext returns the W3C trace-context carrier of ctx's span as
// the JSON object a run stores, or nil when ctx carries no valid span
// context. It needs no tracer: the caller's own span is stored as well.
func injectTraceContext(ctx context.Context) *string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	doc, err := json.Marshal(carrier)
	if err != nil {
		return nil
	}
	text := string(doc)
	return &text
}

// extractTraceContext returns the span context a run stored, or an invalid
// one when it stored none or an unreadable one: a link is a hint, never a
// reason to refuse work.
func extractTraceContext(doc []byte) trace.SpanContext {
	if len(doc) == 0 {
		return trace.SpanContext{}
	}
	carrier := propagation.MapCarrier{}
	if err := json.Unmarshal(doc, &carrier); err != nil {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(traceContext.Extract(context.Background(), carrier))
}

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
