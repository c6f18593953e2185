package docket

import (
	"context"
	"log/slog"
	"time"

	"github.com/docketrun/docket-go/internal/claimpolicy"
)

// observeClaim records the identity-free observation of one claim call that
// started at start: a debug log and the claim, admission, attempt, poison and
// release metrics. Only bounded enums and counts leave this function.
func (c *Client) observeClaim(ctx context.Context, start time.Time, req claimpolicy.Request, res claimpolicy.Result, err error) {
	elapsed := time.Since(start)
	obs := c.engine.Observe(req, res, err)
	c.logger.LogAttrs(ctx, slog.LevelDebug, "docket claim",
		slog.String("policy", obs.Policy),
		slog.String("result", obs.Result),
		slog.String("reason", obs.Reason),
		slog.String("contention_phase", obs.ContentionPhase),
		slog.String("preference", obs.Preference),
		slog.Bool("fallback", obs.FallbackUsed),
		slog.Int("demand", obs.Demand),
		slog.Int("leases", obs.Leases),
		slog.Int("poisoned", obs.Poisoned),
		slog.Int("promotions", obs.Promotions),
		slog.Int("reacquisitions", obs.Reacquisitions),
		slog.Int("steals", obs.Steals),
		slog.Duration("duration", elapsed),
	)
	c.telemetry.claim(ctx, elapsed, obs, countOutcomes(res, c.engine.tenantFair))
}
