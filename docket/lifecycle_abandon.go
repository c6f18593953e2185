package docket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Default backoff of AbandonClaim: the n-th abandon (counting from zero)
// reschedules after min(base * 2^n, cap).
const (
	// DefaultAbandonBackoffBase is the backoff after a run's first abandon.
	DefaultAbandonBackoffBase = time.Second
	// DefaultAbandonBackoffCap bounds the abandon backoff.
	DefaultAbandonBackoffCap = 10 * time.Minute
)

// AbandonRequest gives back a claim the holder cannot run on its host.
type AbandonRequest struct {
	// Holder is the claim holder; its token must be the run's exact token.
	Holder Holder
	// ExpectedSeq is the checkpoint_seq the holder last saw.
	ExpectedSeq int64
	// RetryAt, when non-zero, is when the run is due again instead of the
	// backoff; it must be a time PostgreSQL's timestamptz can hold.
	RetryAt time.Time
	// BackoffBase is the first backoff; 0 means DefaultAbandonBackoffBase.
	BackoffBase time.Duration
	// BackoffCap bounds the backoff; 0 means DefaultAbandonBackoffCap.
	BackoffCap time.Duration
	// MaxAbandons poisons the run (max_claim_abandons_exceeded) when this
	// abandon brings its abandon count to MaxAbandons; 0 never poisons.
	MaxAbandons int
}

// AbandonOutcome is what AbandonClaim did.
type AbandonOutcome string

// The outcomes of AbandonClaim.
const (
	// AbandonRescheduled: the run is due again at RetryAt or after the backoff.
	AbandonRescheduled AbandonOutcome = "rescheduled"
	// AbandonPoisoned: the abandon limit was reached; the run waits for
	// RetryPoisonedRun.
	AbandonPoisoned AbandonOutcome = "poisoned"
	// AbandonStale: the token or checkpoint sequence is outdated; nothing
	// changed.
	AbandonStale AbandonOutcome = "stale"
)

// AbandonResult reports an AbandonClaim.
type AbandonResult struct {
	// Outcome is rescheduled, poisoned or stale.
	Outcome AbandonOutcome
	// Run is the run after the abandon; the zero Run when stale.
	Run Run
}

// AbandonClaim gives back a claim whose work is incompatible with the
// holder's host, fenced on the exact token and ExpectedSeq. The claim and the
// admission marker are cleared in the same statement, freeing the tenant's
// slot, and the abandon count grows by one. The run is rescheduled at RetryAt
// or after min(base * 2^abandons, cap) (abandons counted before this one), or
// poisoned when MaxAbandons is reached. A stale holder gets AbandonStale and
// changes nothing; a missing run is ErrNotFound.
func (c *Client) AbandonClaim(ctx context.Context, req AbandonRequest) (AbandonResult, error) {
	return timedStale(ctx, c.telemetry, opAbandonClaim, func() (AbandonResult, bool, error) {
		scopeKey, err := c.holderKey(req.Holder)
		if err != nil {
			return AbandonResult{}, false, err
		}
		base, limit := req.BackoffBase, req.BackoffCap
		if base == 0 {
			base = DefaultAbandonBackoffBase
		}
		if limit == 0 {
			limit = DefaultAbandonBackoffCap
		}
		switch {
		case base < 0 || limit < 0 || base > limit:
			return AbandonResult{}, false, invalidArgument("abandon backoff base %s and cap %s need 0 < base <= cap", base, limit)
		case req.MaxAbandons < 0 || req.MaxAbandons > math.MaxInt32:
			return AbandonResult{}, false, invalidArgument("max abandons %d is outside 0..%d", req.MaxAbandons, math.MaxInt32)
		case req.ExpectedSeq < 0:
			return AbandonResult{}, false, invalidArgument("expected checkpoint sequence %d is negative", req.ExpectedSeq)
		}
		if !req.RetryAt.IsZero() {
			if err := requireStorableTime("abandon RetryAt", req.RetryAt); err != nil {
				return AbandonResult{}, false, err
			}
		}
		params := dbgen.AbandonClaimParams{
			MaxAbandons:        int32(req.MaxAbandons),
			BackoffBaseSeconds: base.Seconds(),
			BackoffCapSeconds:  limit.Seconds(),
			ScopeKey:           scopeKey,
			RunID:              req.Holder.RunID,
			ClaimToken:         req.Holder.Token,
			ExpectedSeq:        req.ExpectedSeq,
		}
		if !req.RetryAt.IsZero() {
			params.RetryAt = &req.RetryAt
		}
		row, err := c.queries.AbandonClaim(ctx, params)
		if errors.Is(err, pgx.ErrNoRows) {
			if err := explainFenceMiss(ctx, c.queries, scopeKey, req.Holder.RunID, nil); err != nil {
				return AbandonResult{}, false, err
			}
			return AbandonResult{Outcome: AbandonStale}, true, nil
		}
		if err != nil {
			return AbandonResult{}, false, fmt.Errorf("docket: abandon claim: %w", err)
		}
		c.announceIfDue(ctx, c.queries, row.DocketRun)
		outcome := AbandonRescheduled
		if row.DocketRun.PoisonedAt != nil {
			outcome = AbandonPoisoned
		}
		c.telemetry.abandoned(ctx, outcome, !req.RetryAt.IsZero(), row.MarkerCleared)
		return AbandonResult{Outcome: outcome, Run: runWithPhase(row.DocketRun, row.Phase)}, false, nil
	})
}
