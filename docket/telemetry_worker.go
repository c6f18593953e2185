package docket

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/docketrun/docket-go/policy"
)

// sweepCall records one claim call a Worker made to continue a ring sweep:
// its result is claimed (at least one outcome), empty, unavailable (the
// engine refused it) or error.
func (t *telemetry) sweepCall(ctx context.Context, outcomes int, err error) {
	result := policy.ResultClaimed
	switch {
	case err != nil:
		result = policy.ResultError
		if _, ok := errors.AsType[*ClaimPolicyUnavailableError](err); ok {
			result = policy.ResultUnavailable
		}
	case outcomes == 0:
		result = policy.ResultEmpty
	}
	t.workerSweepCalls.Add(ctx, 1, metric.WithAttributes(attrResult.String(result)))
}
