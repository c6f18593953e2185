package docket

import (
	"context"

	"go.opentelemetry.io/otel/metric"
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
)

// fenced counts one Worker verdict commit that met the claim fence.
func (t *telemetry) fenced(ctx context.Context, reason string) {
	t.workerFencedCommits.Add(ctx, 1, metric.WithAttributes(attrReason.String(reason)))
}
