package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// TenantPause is the pause state of one owner partition after a write.
type TenantPause struct {
	// Scope is the owner the partition belongs to.
	Scope Scope
	// Paused reports whether the partition is paused now.
	Paused bool
	// Version is the partition version after the write (the one cap
	// overrides move too).
	Version int64
}

// PauseTenant stops TenantFair from admitting or leasing any run of scope
// until ResumeTenant: each claim call still visits the partition in its ring
// order and refuses it (trace disposition "paused"), nothing of the scope is
// deleted, its claimed runs keep their holders, who commit as usual, and its
// queued and ready runs keep their order. Legacy does not read the flag. The
// write bumps the partition version by one and creates the partition (with
// its ring position) when the scope has none yet. Pausing a paused scope is a
// write too (the version moves). An invalid scope (ErrInvalidArgument,
// ErrTenantRequired) or a version mismatch (ErrStale) writes nothing.
func (c *store) PauseTenant(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (TenantPause, error) {
	return timed(ctx, c.telemetry, opPauseTenant, func() (TenantPause, error) {
		return c.writePaused(ctx, scope, true, opts)
	})
}

// ResumeTenant undoes PauseTenant: the next claim calls admit and lease the
// scope's runs again, in their order, and listening Workers are woken at
// commit so they claim them at once. Like PauseTenant it bumps the partition
// version, creates a missing partition, and writes nothing on an invalid
// scope or a version mismatch (ErrStale).
func (c *store) ResumeTenant(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (TenantPause, error) {
	return timed(ctx, c.telemetry, opResumeTenant, func() (TenantPause, error) {
		return c.writePaused(ctx, scope, false, opts)
	})
}

// writePaused runs the compare-and-set of the pause flag under partition
// authority, as writeOverride does for the cap.
func (c *store) writePaused(ctx context.Context, scope Scope, paused bool, opts ClaimPolicyWriteOptions) (TenantPause, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return TenantPause{}, err
	}
	if err := opts.validate(); err != nil {
		return TenantPause{}, err
	}
	var written dbgen.DocketClaimPartition
	err = c.inTx(ctx, func(q *dbgen.Queries) error {
		if err := q.EnsureClaimPartition(ctx, key); err != nil {
			return fmt.Errorf("docket: creating claim partition: %w", err)
		}
		// The lock waits for a claim call that is visiting the partition,
		// so a call either saw the partition before the write or after it.
		current, err := q.LockClaimPartition(ctx, key)
		if err != nil {
			return fmt.Errorf("docket: locking claim partition: %w", err)
		}
		if err := opts.check(current.PartitionVersion); err != nil {
			return err
		}
		written, err = q.PutClaimPartitionPaused(ctx, dbgen.PutClaimPartitionPausedParams{
			Paused:   paused,
			ScopeKey: key,
		})
		if err != nil {
			return fmt.Errorf("docket: writing claim partition pause: %w", err)
		}
		if !paused {
			// The scope's due runs were due all along: only the resume
			// makes them claimable, so Workers hear of it now.
			c.announceDue(ctx, q, time.Time{})
		}
		return nil
	})
	if err != nil {
		return TenantPause{}, err
	}
	return TenantPause{Scope: scope, Paused: written.Paused, Version: written.PartitionVersion}, nil
}
