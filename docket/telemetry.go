package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/policy"
	"github.com/jackc/puddle/v2"
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
	attrDomain          = attribute.Key("domain")
	attrPhase           = attribute.Key("phase")
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

// The operation attribute values of docket.store.duration.
const (
	opInsertRun                = "insert_run"
	opInsertRuns               = "insert_runs"
	opFetchRun                 = "fetch_run"
	opListRuns                 = "list_runs"
	opListDomainRuns           = "list_domain_runs"
	opInspectRun               = "inspect_run"
	opRefreshClaim             = "refresh_claim"
	opReleaseClaim             = "release_claim"
	opCommit                   = "commit"
	opAbandonClaim             = "abandon_claim"
	opMutateRun                = "mutate_run"
	opCancel                   = "cancel"
	opRetryPoisonedRun         = "retry_poisoned_run"
	opRetryRun                 = "retry_run"
	opDeleteFinishedRuns       = "delete_finished_runs"
	opFetchClaimPolicyDefault  = "fetch_claim_policy_default"
	opPutClaimPolicyDefault    = "put_claim_policy_default"
	opPutClaimPolicyParking    = "put_claim_policy_parking"
	opPutClaimPolicyOverride   = "put_claim_policy_override"
	opResetClaimPolicyOverride = "reset_claim_policy_override"
	opInspectClaimPolicy       = "inspect_claim_policy"
	opPauseTenant              = "pause_tenant"
	opPutClaimPolicyRate       = "put_claim_policy_rate"
	opPauseDomain              = "pause_domain"
	opResumeDomain             = "resume_domain"
	opPutTenantRate            = "put_tenant_rate"
	opResetTenantRate          = "reset_tenant_rate"
	opResumeTenant             = "resume_tenant"
	opListTenants              = "list_tenants"
	opAddSchedule              = "add_schedule"
	opListSchedules            = "list_schedules"
	opFetchSchedule            = "fetch_schedule"
	opPauseSchedule            = "pause_schedule"
	opResumeSchedule           = "resume_schedule"
	opRemoveSchedule           = "remove_schedule"
	opTakeScheduleTicks        = "take_schedule_ticks"
	opBrowseTenants            = "browse_tenants"
	opInspectTenant            = "inspect_tenant"
	opDomainOverview           = "domain_overview"
	opRingWindow               = "ring_window"
	opCountRunPhases           = "count_run_phases"
	opSearchRuns               = "search_runs"
	opListQueuedRuns           = "list_queued_runs"
)

// The result attribute values of docket.store.duration.
const (
	storeOK       = "ok"
	storeNotFound = "not_found"
	storeStale    = "stale"
	storeInvalid  = "invalid"
	storeError    = "error"
)

// timed runs f as store operation op and records its duration with the
// result f's error classifies. A store method's body is f:
//
//	func (c *store) FetchRun(ctx context.Context, scope Scope, runID string) (Run, error) {
//		return timed(ctx, c.telemetry, opFetchRun, func() (Run, error) {
//			...
//		})
//	}
func timed[T any](ctx context.Context, t *telemetry, op string, f func() (T, error)) (T, error) {
	return timedStale(ctx, t, op, func() (T, bool, error) {
		v, err := f()
		return v, false, err
	})
}

// timedStale is timed for an operation that can come back stale without an
// error: f reports stale when the holder's fence no longer matched, so
// nothing changed.
func timedStale[T any](ctx context.Context, t *telemetry, op string, f func() (T, bool, error)) (_ T, err error) {
	start := time.Now()
	var stale bool
	defer func() { t.recordStore(ctx, op, start, err, stale) }()
	var v T
	v, stale, err = f()
	return v, err
}

// timedErr is timed for an operation that returns only an error.
func timedErr(ctx context.Context, t *telemetry, op string, f func() error) error {
	_, err := timed(ctx, t, op, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

// recordStore records one call of operation op that began at start, with
// the result err and stale classify. timed calls it; so do the calls that
// time several operations with one statement.
func (t *telemetry) recordStore(ctx context.Context, op string, start time.Time, err error, stale bool) {
	t.storeDuration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(
		attrOperation.String(op), attrResult.String(storeResult(err, stale))))
}

// storeResult classifies an operation's error into the bounded result set.
func storeResult(err error, stale bool) string {
	switch {
	case err == nil && stale:
		return storeStale
	case err == nil:
		return storeOK
	case errors.Is(err, ErrNotFound):
		return storeNotFound
	case errors.Is(err, ErrStale), errors.Is(err, ErrStaleFence), errors.Is(err, ErrClaimLost):
		return storeStale
	case errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrInvalidCap), errors.Is(err, ErrTenantRequired),
		errors.Is(err, ErrInvalidTransition), errors.Is(err, ErrDuplicateRun), errors.Is(err, ErrNotInitialized),
		errors.Is(err, ErrDuplicateSchedule):
		return storeInvalid
	}
	return storeError
}

// The kind attribute values of docket.claim.outcomes and docket.claim.attempts.
const (
	kindLease      = "lease"
	kindPoison     = "poison"
	kindAcquired   = "acquired"
	kindReacquired = "reacquired"
)

// outcomeClasses orders the work classes for outcomeCounts.
var outcomeClasses = [...]policy.WorkClass{policy.ClassAdmittedReady, policy.ClassQueuedReady, policy.ClassExpired}

// outcomeCounts is the identity-free tally of a claim call's outcomes that
// claimpolicy.Observation does not carry: outcomes per class and kind, and the
// poisons that cleared an admission marker.
type outcomeCounts struct {
	leases, poisons [len(outcomeClasses)]int
	released        int
}

// countOutcomes tallies res. A poisoned admitted-ready row held a marker in
// both engines (the class is read under the row lock), and TenantFair's
// expired page holds only marked claims; a Legacy expired poison may or may
// not have held one, so it is not counted as a release.
func countOutcomes(res claimpolicy.Result, tenantFair bool) outcomeCounts {
	var n outcomeCounts
	for _, o := range res.Outcomes {
		for i, class := range outcomeClasses {
			if o.Class != class {
				continue
			}
			if !o.Poisoned {
				n.leases[i]++
				continue
			}
			n.poisons[i]++
			if class == policy.ClassAdmittedReady || (class == policy.ClassExpired && tenantFair) {
				n.released++
			}
		}
	}
	return n
}

// claim records one claim call that reached the claim statement: obs is its
// observation, n the tally of its outcomes and elapsed its duration.
func (t *telemetry) claim(ctx context.Context, elapsed time.Duration, obs claimpolicy.Observation, n outcomeCounts) {
	seconds := elapsed.Seconds()
	engine := attrPolicy.String(obs.Policy)
	result := attrResult.String(obs.Result)
	preference := attrPreference.String(obs.Preference)
	fallback := attrFallback.Bool(obs.FallbackUsed)
	t.claimDuration.Record(ctx, seconds, metric.WithAttributes(engine, result, preference, fallback))
	t.claimCalls.Add(ctx, 1, metric.WithAttributes(engine, result, attrReason.String(orNone(obs.Reason)), preference, fallback))
	t.claimDemand.Record(ctx, int64(obs.Demand), metric.WithAttributes(engine))
	phase := attrContentionPhase.String(orNone(obs.ContentionPhase))
	t.admissionDuration.Record(ctx, seconds, metric.WithAttributes(engine, phase))
	if obs.ContentionPhase != "" {
		t.admissionContentions.Add(ctx, 1, metric.WithAttributes(engine, phase))
	}
	for i, class := range outcomeClasses {
		addCount(ctx, t.claimOutcomes, n.leases[i], engine, attrClass.String(string(class)), attrKind.String(kindLease))
		addCount(ctx, t.claimOutcomes, n.poisons[i], engine, attrClass.String(string(class)), attrKind.String(kindPoison))
	}
	addCount(ctx, t.claimSteals, obs.Steals, engine)
	addCount(ctx, t.claimReacquisitions, obs.Reacquisitions, engine)
	addCount(ctx, t.claimPromotions, obs.Promotions, engine)
	reacquired := obs.Reacquisitions + obs.Steals
	addCount(ctx, t.claimAttempts, obs.Leases-reacquired, engine, attrKind.String(kindAcquired))
	addCount(ctx, t.claimAttempts, reacquired, engine, attrKind.String(kindReacquired))
	t.poisoned(ctx, policy.PoisonMaxClaimAttempts, obs.Poisoned)
	t.released(ctx, releasePoison, n.released)
}

// addCount adds n to counter when n is positive, so an attribute set
// appears only once it has happened.
func addCount(ctx context.Context, counter metric.Int64Counter, n int, attrs ...attribute.KeyValue) {
	if n > 0 {
		counter.Add(ctx, int64(n), metric.WithAttributes(attrs...))
	}
}

// orNone maps an empty enum value to "none".
func orNone(v string) string {
	if v == "" {
		return attrNone
	}
	return v
}

// The reason attribute values of docket.admission.releases: why a lifecycle
// change cleared an admission marker.
const (
	// releaseFuture: Commit with ReleaseAt (or the worker's RetryAfter).
	releaseFuture = "future"
	// releaseExternal: Commit with ReleaseExternal.
	releaseExternal = "external"
	// releaseTerminal: Commit with ReleaseTerminal.
	releaseTerminal = "terminal"
	// releaseSignal: MutateRun or Cancel of a run that held a marker.
	releaseSignal = "signal"
	// releaseHostIncompatible: AbandonClaim rescheduled at the holder's RetryAt.
	releaseHostIncompatible = "host_incompatible"
	// releaseAbandonBackoff: AbandonClaim rescheduled after the computed backoff.
	releaseAbandonBackoff = "abandon_backoff"
	// releasePoison: a claim call poisoned an admitted run, or AbandonClaim
	// reached its abandon limit.
	releasePoison = "poison"
)

// poisonMaxClaimAbandons is the poison reason AbandonClaim writes.
const poisonMaxClaimAbandons = "max_claim_abandons_exceeded"

// released counts n admission markers cleared for reason.
func (t *telemetry) released(ctx context.Context, reason string, n int) {
	addCount(ctx, t.admissionReleases, n, attrReason.String(reason))
}

// poisoned counts n runs poisoned for reason.
func (t *telemetry) poisoned(ctx context.Context, reason string, n int) {
	addCount(ctx, t.poison, n, attrReason.String(reason))
}

// committed records the release of a commit whose statement cleared a
// marker. Only the schedules that leave admission can clear one.
func (t *telemetry) committed(ctx context.Context, s Disposition, markerCleared bool) {
	if !markerCleared {
		return
	}
	switch s.kind {
	case "at", "after":
		t.released(ctx, releaseFuture, 1)
	case "external":
		t.released(ctx, releaseExternal, 1)
	case "terminal":
		t.released(ctx, releaseTerminal, 1)
	}
}

// abandoned records an abandon that changed the run: a poison, and the
// release of the marker its statement cleared, if the run held one.
func (t *telemetry) abandoned(ctx context.Context, outcome AbandonOutcome, explicitRetry, markerCleared bool) {
	if outcome == AbandonPoisoned {
		t.poisoned(ctx, poisonMaxClaimAbandons, 1)
	}
	if !markerCleared {
		return
	}
	switch {
	case outcome == AbandonPoisoned:
		t.released(ctx, releasePoison, 1)
	case explicitRetry:
		t.released(ctx, releaseHostIncompatible, 1)
	default:
		t.released(ctx, releaseAbandonBackoff, 1)
	}
}

// signalled records a MutateRun write of a run that held a marker.
func (t *telemetry) signalled(ctx context.Context, markerCleared bool) {
	if markerCleared {
		t.released(ctx, releaseSignal, 1)
	}
}

// The reason attribute values of docket.worker.fenced_commits: what the row
// showed when a Worker's verdict commit met the claim fence.
const (
	// fenceNewerHolder: the fence refused the commit; another holder
	// committed or took the run, or the run is gone.
	fenceNewerHolder = "newer_holder"
	// fenceAlreadyApplied: an earlier attempt of the same commit lost its
	// answer, and the row shows that it was committed.
	fenceAlreadyApplied = "already_applied"
	// fenceCancelled: the fence refused the commit because an operator
	// cancelled the run while it was claimed.
	fenceCancelled = "cancelled"
)

// fenced counts one Worker verdict commit that met the claim fence.
func (t *telemetry) fenced(ctx context.Context, reason string) {
	t.workerFencedCommits.Add(ctx, 1, metric.WithAttributes(attrReason.String(reason)))
}

// sweepCall records one claim call a Worker made to continue a ring sweep:
// its result is claimed (at least one outcome), empty, unavailable (the
// engine refused it) or error.
func (t *telemetry) sweepCall(ctx context.Context, outcomes int, err error) {
	result := claimpolicy.ResultClaimed
	switch {
	case err != nil:
		result = claimpolicy.ResultError
		if _, ok := errors.AsType[*ClaimPolicyUnavailableError](err); ok {
			result = claimpolicy.ResultUnavailable
		}
	case outcomes == 0:
		result = claimpolicy.ResultEmpty
	}
	t.workerSweepCalls.Add(ctx, 1, metric.WithAttributes(attrResult.String(result)))
}

// queuePhases are the phases docket.queue.runs reports, each collection,
// zero included: those of running runs that are not poisoned, the ones
// QueueGauges reads through the claim indexes.
var queuePhases = []RunPhase{PhaseQueued, PhaseReady, PhasePaused, PhaseRetrying, PhaseScheduled, PhaseExecuting}

// registerQueueGauges registers on mp (nothing when nil) the queue gauges
// of one domain, named by its schema: at each collection read runs the
// one QueueGauges statement, and the gauges report its counts by phase and
// the ages of the oldest queued and the oldest ready run. The callback
// lives as long as the provider.
func registerQueueGauges(mp metric.MeterProvider, domain string, read func(ctx context.Context) ([]dbgen.QueueGaugesRow, error)) error {
	if mp == nil {
		return nil
	}
	meter := mp.Meter(meterName)
	oldestQueued, err1 := meter.Float64ObservableGauge("docket.queue.oldest_queued_age", metric.WithUnit("s"),
		metric.WithDescription("Seconds since the earliest wake_at of the domain's queued runs (due, not admitted), 0 when none is queued."))
	oldestReady, err2 := meter.Float64ObservableGauge("docket.queue.oldest_ready_age", metric.WithUnit("s"),
		metric.WithDescription("Seconds since the earliest wake_at of the domain's ready runs (due, admitted, unclaimed), 0 when none is ready."))
	runs, err3 := meter.Int64ObservableGauge("docket.queue.runs", metric.WithUnit("{run}"),
		metric.WithDescription("Running, unpoisoned runs of the domain by phase."))
	if err := errors.Join(err1, err2, err3); err != nil {
		return fmt.Errorf("docket: creating the queue gauges: %w", err)
	}
	inDomain := attrDomain.String(domain)
	_, err := meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		rows, err := read(ctx)
		if errors.Is(err, puddle.ErrClosedPool) {
			// The client's pool was closed: the client is gone, and its
			// domain's gauges report nothing rather than an error at every
			// collection from then on.
			return nil
		}
		if err != nil {
			return fmt.Errorf("docket: reading the queue gauges of domain %s: %w", domain, err)
		}
		counts := map[RunPhase]int64{}
		ages := map[RunPhase]float64{}
		for _, r := range rows {
			counts[RunPhase(r.Phase)] += r.Runs
			ages[RunPhase(r.Phase)] = r.OldestWakeAgeSeconds
		}
		for _, phase := range queuePhases {
			o.ObserveInt64(runs, counts[phase], metric.WithAttributes(inDomain, attrPhase.String(string(phase))))
		}
		o.ObserveFloat64(oldestQueued, ages[PhaseQueued], metric.WithAttributes(inDomain))
		o.ObserveFloat64(oldestReady, ages[PhaseReady], metric.WithAttributes(inDomain))
		return nil
	}, oldestQueued, oldestReady, runs)
	if err != nil {
		return fmt.Errorf("docket: registering the queue gauges: %w", err)
	}
	return nil
}
