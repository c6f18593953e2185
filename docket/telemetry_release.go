package docket

import "context"

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
