package docket

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// meterName is the instrumentation scope of every Docket instrument.
const meterName = "github.com/docketrun/docket-go/docket"

// The attribute keys. Every value comes from a fixed set listed in the
// telemetry guide; tenant, scope, run, graph, cursor, token and call identity
// and error text never become attributes.
const (
	attrPolicy          = attribute.Key("policy")
	attrResult          = attribute.Key("result")
	attrReason          = attribute.Key("reason")
	attrPreference      = attribute.Key("preference")
	attrFallback        = attribute.Key("fallback")
	attrClass           = attribute.Key("class")
	attrKind            = attribute.Key("kind")
	attrOperation       = attribute.Key("operation")
	attrContentionPhase = attribute.Key("contention_phase")
)

// attrNone is the value of reason and contention_phase when there is none.
const attrNone = "none"

// durationBuckets are the histogram boundaries of every duration, in
// seconds; 0.25 is the engines' own lock-wait cap.
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// demandBuckets are the boundaries of the claim demand histogram; one call
// returns at most 256 outcomes.
var demandBuckets = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256}

// telemetry holds the metric instruments of one Client, created once from
// the configured MeterProvider.
type telemetry struct {
	claimDuration        metric.Float64Histogram
	claimCalls           metric.Int64Counter
	claimDemand          metric.Int64Histogram
	claimOutcomes        metric.Int64Counter
	claimSteals          metric.Int64Counter
	claimReacquisitions  metric.Int64Counter
	claimPromotions      metric.Int64Counter
	claimAttempts        metric.Int64Counter
	admissionDuration    metric.Float64Histogram
	admissionContentions metric.Int64Counter
	admissionReleases    metric.Int64Counter
	poison               metric.Int64Counter
	storeDuration        metric.Float64Histogram
	workerFencedCommits  metric.Int64Counter
	workerSweepCalls     metric.Int64Counter
}

// newTelemetry creates every instrument from mp, or from a no-op provider
// when mp is nil.
func newTelemetry(mp metric.MeterProvider) (*telemetry, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	b := instruments{meter: mp.Meter(meterName)}
	t := &telemetry{
		claimDuration: b.histogram("docket.claim.duration", "s",
			"Duration of claim calls that reached the claim statement.", durationBuckets),
		claimCalls: b.counter("docket.claim.calls", "{call}",
			"Claim calls that reached the claim statement."),
		claimDemand: b.intHistogram("docket.claim.demand", "{outcome}",
			"Requested outcomes per claim call.", demandBuckets),
		claimOutcomes: b.counter("docket.claim.outcomes", "{outcome}",
			"Committed claim outcomes by work class and kind."),
		claimSteals: b.counter("docket.claim.steals", "{lease}",
			"Leases that took over an expired claim."),
		claimReacquisitions: b.counter("docket.claim.reacquisitions", "{lease}",
			"TenantFair leases of admitted-ready runs."),
		claimPromotions: b.counter("docket.claim.promotions", "{lease}",
			"TenantFair leases that promoted a queued run to admitted."),
		claimAttempts: b.counter("docket.claim.attempts", "{attempt}",
			"Claim attempts consumed by leases."),
		admissionDuration: b.histogram("docket.admission.duration", "s",
			"Duration of claim calls by contention phase.", durationBuckets),
		admissionContentions: b.counter("docket.admission.contentions", "{call}",
			"Claim calls refused because the policy cursor stayed locked."),
		admissionReleases: b.counter("docket.admission.releases", "{release}",
			"Admission markers cleared, by reason."),
		poison: b.counter("docket.poison", "{run}",
			"Runs poisoned, by poison reason."),
		storeDuration: b.histogram("docket.store.duration", "s",
			"Duration of run-store and claim-policy operations.", durationBuckets),
		workerFencedCommits: b.counter("docket.worker.fenced_commits", "{commit}",
			"Worker verdict commits that met the claim fence, by what the row showed."),
		workerSweepCalls: b.counter("docket.worker.sweep_calls", "{call}",
			"Worker claim calls made at once after an unfilled TenantFair call, to finish one ring revolution."),
	}
	if b.err != nil {
		return nil, fmt.Errorf("docket: creating metric instruments: %w", b.err)
	}
	return t, nil
}

// instruments creates instruments on one meter and collects their errors.
type instruments struct {
	meter metric.Meter
	err   error
}

func (b *instruments) counter(name, unit, desc string) metric.Int64Counter {
	c, err := b.meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.err = errors.Join(b.err, err)
	return c
}

func (b *instruments) histogram(name, unit, desc string, bounds []float64) metric.Float64Histogram {
	h, err := b.meter.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(bounds...))
	b.err = errors.Join(b.err, err)
	return h
}

func (b *instruments) intHistogram(name, unit, desc string, bounds []float64) metric.Int64Histogram {
	h, err := b.meter.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(bounds...))
	b.err = errors.Join(b.err, err)
	return h
}
