package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// PutClaimPolicyParking turns parked partitions on or off for the whole
// fairness domain at runtime and bumps the policy version by one. The
// configured value is left alone, so restarting with unchanged configuration
// keeps this choice; changing the configured ParkDormant overwrites it at the
// next start. Turning parking off unparks every partition in the same
// transaction, so the next call walks the full ring. Before the
// first TenantFair start this fails with ErrNotInitialized, and a version
// mismatch fails with ErrStale; either way nothing is written. Writing the
// current value is a write too (the version moves).
func (c *store) PutClaimPolicyParking(ctx context.Context, parkDormant bool, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyParking, func() (ClaimPolicyDefault, error) {
		if err := opts.validate(); err != nil {
			return ClaimPolicyDefault{}, err
		}
		var written dbgen.DocketClaimPolicy
		err := c.inTx(ctx, func(q *dbgen.Queries) error {
			// The policy row lock keeps every claim call out until this commits,
			// so none parks after the unpark below.
			current, err := q.LockClaimPolicy(ctx)
			if err != nil {
				return fmt.Errorf("docket: locking claim policy: %w", err)
			}
			if current.InitializedAt == nil {
				return fmt.Errorf("%w: no TenantFair start has persisted a policy yet", ErrNotInitialized)
			}
			if err := opts.check(current.PolicyVersion); err != nil {
				return err
			}
			written, err = q.PutClaimPolicyParkDormant(ctx, parkDormant)
			if err != nil {
				return fmt.Errorf("docket: writing claim policy park_dormant: %w", err)
			}
			if !parkDormant {
				if _, err := q.UnparkAllPartitions(ctx); err != nil {
					return fmt.Errorf("docket: unparking partitions: %w", err)
				}
			}
			return nil
		})
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		return claimPolicyDefaultOf(written), nil
	})
}
