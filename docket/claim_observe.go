package docket

import (
	"context"
	"log/slog"

	"github.com/docketrun/docket-go/policy"
)

// observeClaim records the identity-free observation of one claim call. It
// carries only bounded enums and counts, so it is safe as telemetry.
func (c *Client) observeClaim(ctx context.Context, req policy.Request, res policy.Result, err error) {
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
	)
}
