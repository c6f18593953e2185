package docket

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/trace"
)

// errZeroResult is the error a handler span records for the zero Result.
var errZeroResult = errors.New("docket: the handler returned the zero Result")

// startHandlerSpan starts the docket.handler span of j as a child of ctx's
// span (the Worker's Run context), linked to the span that inserted the run
// when the run stored one.
func (j *Job) startHandlerSpan(ctx context.Context) (context.Context, *span) {
	attrs := append(runAttrs(j.RunID, j.Scope, j.GraphID), spanAttrStep.Int(j.Step), spanAttrAttempt.Int(j.Attempt))
	opts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	if j.link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: j.link}))
	}
	return j.worker.client.startSpan(ctx, spanHandler, trace.SpanKindConsumer, opts...)
}

// endHandlerSpan ends the handler span with the verdict's checkpoint type;
// a failed attempt (fail, panic, no_result, or backoff when the retry
// policy retries it) sets the status Error with handlerErr recorded when
// there is one.
func endHandlerSpan(sp *span, plan commitPlan, handlerErr error) {
	sp.set(spanAttrVerdict.String(plan.checkpointType))
	switch plan.checkpointType {
	case "fail", "panic", "no_result", "backoff":
		sp.fail(handlerErr, "docket: the handler failed the run ("+plan.checkpointType+")")
	}
	sp.end(nil)
}

// parentOf returns io carrying the span, so the spans of the verdict's
// commit are its children; io itself without a span.
func (s *span) parentOf(io context.Context) context.Context {
	if s == nil {
		return io
	}
	return trace.ContextWithSpan(io, s.s)
}

// startCommitSpan starts the docket.commit span of the write of plan.
func (j *Job) startCommitSpan(ctx context.Context, plan commitPlan) *span {
	_, sp := j.worker.client.startSpan(ctx, spanCommit, trace.SpanKindClient, trace.WithAttributes(
		spanAttrRunID.String(j.RunID), spanAttrVerdict.String(plan.checkpointType)))
	return sp
}

// settled ends sp, the commit span of plan, with what became of the write
// (err its error), and reports the verdict event. A fence refusal is an
// answer, not a failure: only a write that failed sets the status Error.
func (j *Job) settled(sp *span, plan commitPlan, err error) {
	outcome := verdictOutcome(err)
	sp.set(spanAttrOutcome.String(outcome.String()), spanAttrFenced.Bool(outcome == VerdictFenced))
	if outcome == VerdictFailed {
		sp.fail(err, "docket: the verdict was not written")
	}
	sp.end(nil)
	j.verdict(plan, err)
}
