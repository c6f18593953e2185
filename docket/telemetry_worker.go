package docket

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

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
