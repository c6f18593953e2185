package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Holder identifies the holder of one claim: the run, its scope and the exact
// claim token the claim call handed out. Every holder write matches the exact
// token, so a holder whose claim was released, stolen or finished changes
// nothing.
//
// A typical lifecycle, given a lease from ClaimDue:
//
//	h, seq := lease.Holder(), lease.CheckpointSeq
//	// Keep the claim alive while working; stop when it is lost.
//	if _, err := client.RefreshClaim(ctx, h); errors.Is(err, docket.ErrClaimLost) {
//		return err
//	}
//	// Checkpoint and keep the claim, then finish.
//	run, err := client.Commit(ctx, docket.CommitRequest{Holder: h, ExpectedSeq: seq,
//		Step: 1, State: next, Disposition: docket.RetainClaim()})
//	if err != nil {
//		return err // ErrStaleFence: another holder owns the run now
//	}
//	_, err = client.Commit(ctx, docket.CommitRequest{Holder: h, ExpectedSeq: run.CheckpointSeq,
//		Step: 2, State: final, Disposition: docket.ReleaseTerminal(docket.StatusDone)})
//
// A holder that cannot run the work on its host calls AbandonClaim; one that
// stops early without a checkpoint calls ReleaseClaim; one that wants to give
// others a turn commits with ReleaseImmediate and keeps its admission.
type Holder struct {
	// Scope is the run's owner.
	Scope Scope
	// RunID is the claimed run.
	RunID string
	// Token is the claim token of the lease.
	Token uuid.UUID
}

// holderKey validates h and returns its scope key.
func (c *Client) holderKey(h Holder) (string, error) {
	scopeKey, err := c.runKey(h.Scope, h.RunID)
	if err != nil {
		return "", err
	}
	if h.Token == uuid.Nil {
		return "", invalidArgument("claim token is the nil UUID")
	}
	return scopeKey, nil
}

// RefreshClaim renews the holder's claim and returns its claimed_at, which
// only moves forward: greatest(claimed_at, now). The claim and the admission
// marker are kept. A holder that no longer has the claim gets ErrClaimLost
// and changes nothing.
func (c *Client) RefreshClaim(ctx context.Context, h Holder) (time.Time, error) {
	return timed(ctx, c.telemetry, opRefreshClaim, func() (time.Time, error) {
		scopeKey, err := c.holderKey(h)
		if err != nil {
			return time.Time{}, err
		}
		claimedAt, err := c.queries.RefreshClaim(ctx, dbgen.RefreshClaimParams{
			ScopeKey: scopeKey, RunID: h.RunID, ClaimToken: h.Token,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return time.Time{}, explainFenceMiss(ctx, c.queries, scopeKey, h.RunID,
				fmt.Errorf("%w: run %q", ErrClaimLost, h.RunID))
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("docket: refresh claim: %w", err)
		}
		return *claimedAt, nil
	})
}

// ReleaseClaim gives the claim back at once without a checkpoint: the claim
// is cleared, the run is due now and keeps its admission marker, so it is
// admitted-ready and served again before any promotion in its tenant. It
// reports whether this call released the claim; false means the token no
// longer holds it (already released, stolen or finished) and nothing changed,
// which makes the call idempotent. A missing run is ErrNotFound.
func (c *Client) ReleaseClaim(ctx context.Context, h Holder) (bool, error) {
	return timedStale(ctx, c.telemetry, opReleaseClaim, func() (bool, bool, error) {
		scopeKey, err := c.holderKey(h)
		if err != nil {
			return false, false, err
		}
		released, err := c.queries.ReleaseClaim(ctx, dbgen.ReleaseClaimParams{
			ScopeKey: scopeKey, RunID: h.RunID, ClaimToken: h.Token,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			if err := explainFenceMiss(ctx, c.queries, scopeKey, h.RunID, nil); err != nil {
				return false, false, err
			}
			return false, true, nil
		}
		if err != nil {
			return false, false, fmt.Errorf("docket: release claim: %w", err)
		}
		c.announceIfDue(ctx, c.queries, released)
		return true, false, nil
	})
}
