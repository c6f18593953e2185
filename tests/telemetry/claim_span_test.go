package telemetry

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// claimEvents counts the EventClaimed events of evs, and of them the ones
// that leased or poisoned a run or failed.
func claimEvents(evs []docket.WorkerEvent) (calls, found int) {
	for _, ev := range evs {
		if ev.Kind != docket.EventClaimed {
			continue
		}
		calls++
		if ev.Leases > 0 || ev.Poisoned > 0 || ev.Err != nil {
			found++
		}
	}
	return calls, found
}

// An idle Worker's polls record no claim span: N claim calls that found
// nothing, zero docket.claim spans.
func TestTraceIdleWorkerRecordsNoClaimSpans(t *testing.T) {
	t.Parallel()
	const polls = 25
	e := newTREnv(t, testkit.TenantFairConfig(2), true)
	events := testkit.NewWorkerEvents()
	w, done := testkit.StartWorker(t, e.client, docket.WorkerConfig{
		Concurrency:  2,
		PollInterval: time.Millisecond,
		OnEvent:      events.Hook,
		Handler: func(context.Context, *docket.Job) docket.Result {
			t.Error("the idle Worker ran a handler")
			return docket.Fail(nil)
		},
	})
	events.WaitFor(t, fmt.Sprintf("%d claim calls", polls), func(evs []docket.WorkerEvent) bool {
		calls, _ := claimEvents(evs)
		return calls >= polls
	})
	testkit.StopWorker(t, w, done)
	calls, found := claimEvents(events.All())
	if found != 0 {
		t.Fatalf("%d of the idle Worker's %d claim calls found something", found, calls)
	}
	if claims := e.spans("docket.claim"); len(claims) != 0 {
		t.Fatalf("an idle Worker's %d claim calls recorded %d docket.claim spans, want 0", calls, len(claims))
	}
	if names := e.spanNames(); len(names) != 0 {
		t.Fatalf("an idle Worker recorded spans %v", names)
	}
}

// A Worker that claims records exactly one claim span per claim call that
// leased, a child of its Run context's span, with the call's attributes;
// each span starts when its call starts, so it lasts at least as long as
// the call's docket.claim.duration, and ends before the handler of the run
// it leased starts.
func TestTraceWorkerClaimSpanPerLeasingCall(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	meters := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = meters.Shutdown(context.Background()) })
	cfg := testkit.TenantFairConfig(2)
	cfg.MeterProvider = meters
	e := newTREnv(t, cfg, true)
	runs := []string{"tr-cs-1", "tr-cs-2", "tr-cs-3"}
	for _, id := range runs {
		e.insert(e.ctx, docket.Tenant("tr-acme"), id)
	}
	e.recorder.Reset()
	events := testkit.NewWorkerEvents()
	// One run per leasing call: the Worker holds none ahead.
	w, err := docket.NewWorker(e.client, docket.WorkerConfig{
		Concurrency:  1,
		Tuning:       docket.WorkerTuning{ClaimAhead: docket.NoClaimAhead},
		PollInterval: time.Millisecond,
		OnEvent:      events.Hook,
		Handler:      func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) },
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, service := e.app.Start(context.Background(), "app.worker")
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	events.WaitWritten(t, "complete", runs...)
	// Some empty polls after the last lease, so the test sees them too.
	_, before := claimEvents(events.All())
	events.WaitFor(t, "three more claim calls", func(evs []docket.WorkerEvent) bool {
		calls, _ := claimEvents(evs)
		return calls >= before+3
	})
	testkit.StopWorker(t, w, done)
	service.End()

	calls, found := claimEvents(events.All())
	claims := e.spans("docket.claim")
	if found != len(runs) || len(claims) != found || calls <= found {
		t.Fatalf("%d docket.claim spans for %d claim calls, %d of them leasing; want one span per leasing call, %d", len(claims), calls, found, len(runs))
	}
	handlers := e.spans("docket.handler")
	slices.SortFunc(claims, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	slices.SortFunc(handlers, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	var spanned time.Duration
	for i, c := range claims {
		if c.SpanKind() != trace.SpanKindClient || c.Parent().SpanID() != service.SpanContext().SpanID() ||
			c.SpanContext().TraceID() != service.SpanContext().TraceID() {
			t.Errorf("claim span %d kind %v parent %v, want a client span under the Worker's span", i, c.SpanKind(), c.Parent())
		}
		expectAttrs(t, c, map[string]string{"docket.claim.engine": "tenant_fair", "docket.claim.demand": "1",
			"docket.claim.outcomes": "1", "docket.claim.leases": "1", "docket.claim.poisoned": "0"})
		if h := handlers[i]; c.EndTime().After(h.StartTime()) {
			t.Errorf("claim span %d ends at %v, after its handler span starts at %v", i, c.EndTime(), h.StartTime())
		}
		spanned += c.EndTime().Sub(c.StartTime())
	}
	if measured := claimedDuration(t, reader); spanned.Seconds() < measured {
		t.Fatalf("the claim spans last %v in all, less than the %vs their calls took", spanned, measured)
	}
}

// claimedDuration is the sum of docket.claim.duration over the calls that
// claimed something.
func claimedDuration(t *testing.T, reader *sdkmetric.ManualReader) float64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var sum float64
	var count uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "docket.claim.duration" {
				for _, dp := range h.DataPoints {
					if v, _ := dp.Attributes.Value("result"); v.AsString() == "claimed" {
						sum += dp.Sum
						count += dp.Count
					}
				}
			}
		}
	}
	if count != 3 {
		t.Fatalf("docket.claim.duration counted %d claiming calls, want 3", count)
	}
	return sum
}

// An application's ClaimDue and TraceClaimDue record a span for every
// call, one that found nothing due included.
func TestTraceClaimDueWithNothingDueRecordsItsSpan(t *testing.T) {
	t.Parallel()
	e := newTREnv(t, testkit.LegacyConfig(), true)
	req := docket.ClaimRequest{Now: time.Now(), Limit: 3, ClaimTTL: time.Minute, MaxClaimAttempts: 5}
	if res, err := e.client.ClaimDue(e.ctx, req); err != nil || res.Outcomes() != 0 {
		t.Fatalf("claim: %v, %d outcomes", err, res.Outcomes())
	}
	if tr, err := e.client.TraceClaimDue(e.ctx, req); err != nil || tr.Result.Outcomes() != 0 {
		t.Fatalf("trace claim: %v, %d outcomes", err, tr.Result.Outcomes())
	}
	claims := e.spans("docket.claim")
	if len(claims) != 2 {
		t.Fatalf("%d docket.claim spans for two empty calls, want 2", len(claims))
	}
	for _, c := range claims {
		expectAttrs(t, c, map[string]string{"docket.claim.engine": "legacy", "docket.claim.demand": "3",
			"docket.claim.outcomes": "0", "docket.claim.leases": "0", "docket.claim.poisoned": "0"})
	}
}
