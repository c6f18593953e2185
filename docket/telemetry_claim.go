package docket

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/policy"
)

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
