package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ClaimPolicyOverride is the cap state of one owner partition after a write.
type ClaimPolicyOverride struct {
	// Scope is the owner the partition belongs to.
	Scope Scope
	// MaxActiveRuns is the override; 0 means none, so the default applies.
	MaxActiveRuns int
	// Version counts override writes of the partition.
	Version int64
}

// PutClaimPolicyOverride sets the cap of one scope, overriding the default,
// and bumps the partition version by one. A scope without runs gets its
// partition (and with it a ring position) in the same transaction. Overrides
// are durable runtime state: startup never touches them. Lowering a cap below
// the scope's admitted count creates debt; no admission is revoked.
// An invalid cap (ErrInvalidCap), an invalid scope (ErrInvalidArgument,
// ErrTenantRequired) or a version mismatch (ErrStale) writes nothing.
func (c *store) PutClaimPolicyOverride(ctx context.Context, scope Scope, maxActiveRuns int, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyOverride, func() (ClaimPolicyOverride, error) {
		capValue, err := checkedCap(maxActiveRuns)
		if err != nil {
			return ClaimPolicyOverride{}, err
		}
		return c.writeOverride(ctx, scope, &capValue, opts)
	})
}

// ResetClaimPolicyOverride removes the cap override of one scope, so the
// default applies again, and bumps the partition version by one. Like
// PutClaimPolicyOverride it creates the partition if the scope has none, so
// every successful write moves the version. An invalid scope or a version
// mismatch writes nothing.
func (c *store) ResetClaimPolicyOverride(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	return timed(ctx, c.telemetry, opResetClaimPolicyOverride, func() (ClaimPolicyOverride, error) {
		return c.writeOverride(ctx, scope, nil, opts)
	})
}

// writeOverride runs the compare-and-set under partition authority; a nil
// capValue resets the override.
func (c *store) writeOverride(ctx context.Context, scope Scope, capValue *int32, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return ClaimPolicyOverride{}, err
	}
	if err := opts.validate(); err != nil {
		return ClaimPolicyOverride{}, err
	}
	var written dbgen.DocketClaimPartition
	err = c.inTx(ctx, func(q *dbgen.Queries) error {
		if err := q.EnsureClaimPartition(ctx, key); err != nil {
			return fmt.Errorf("docket: creating claim partition: %w", err)
		}
		current, err := q.LockClaimPartition(ctx, key)
		if err != nil {
			return fmt.Errorf("docket: locking claim partition: %w", err)
		}
		// A stale write rolls back, taking a partition it just created along.
		if err := opts.check(current.PartitionVersion); err != nil {
			return err
		}
		written, err = q.PutClaimPartitionOverride(ctx, dbgen.PutClaimPartitionOverrideParams{
			MaxActive: capValue,
			ScopeKey:  key,
		})
		if err != nil {
			return fmt.Errorf("docket: writing claim partition override: %w", err)
		}
		return nil
	})
	if err != nil {
		return ClaimPolicyOverride{}, err
	}
	return ClaimPolicyOverride{
		Scope:         scope,
		MaxActiveRuns: intOrZero(written.MaxActive),
		Version:       written.PartitionVersion,
	}, nil
}
