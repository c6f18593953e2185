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
// transaction, so the next call walks the full ring. Turning it on parks
// every partition that is dormant now, after the policy write commits, in
// short batches that never wait for a lock (see parkDormantPartitions), so
// the walk starts over a small awake ring. Before the
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
		if parkDormant {
			c.parkDormantPartitions(ctx)
		}
		return claimPolicyDefaultOf(written), nil
	})
}

// parkBatchSize is how many awake ring members one batch of
// parkDormantPartitions locks and checks: large enough that switching on over
// 100,000 dormant partitions takes twenty short transactions, small enough
// that each holds its schedule rows for tens of milliseconds.
const parkBatchSize = 5000

// parkDormantPartitions parks every partition that is dormant now, walking
// the awake ring in ring order, one short transaction per batch: the
// first statement locks the batch's schedule rows without waiting (a row a
// writer or a claim call holds is skipped and left to the walk's park), the
// second re-checks dormancy in a snapshot taken after the lock and parks, so
// it follows the walk's two-step park. It runs after the policy write has
// committed, so claim calls are never held back by it, and the park
// statement parks nothing once the domain no longer walks parked. It reports
// how many partitions it parked. A failure stops it without undoing the
// switch: every partition it did not reach stays awake until a visit of the
// walk parks it, so the failure is logged rather than returned.
func (c *store) parkDormantPartitions(ctx context.Context) int64 {
	var parked, after int64
	for {
		var locked []dbgen.LockAwakePartitionsBatchRow
		var n int64
		err := c.inTx(ctx, func(q *dbgen.Queries) error {
			var err error
			locked, err = q.LockAwakePartitionsBatch(ctx, dbgen.LockAwakePartitionsBatchParams{AfterPosition: after, BatchSize: parkBatchSize})
			if err != nil {
				return fmt.Errorf("docket: locking awake partitions: %w", err)
			}
			if len(locked) == 0 {
				return nil
			}
			keys := make([]string, len(locked))
			for i, l := range locked {
				keys[i] = l.ScopeKey
			}
			n, err = q.ParkDormantPartitionsBatch(ctx, keys)
			if err != nil {
				return fmt.Errorf("docket: parking dormant partitions: %w", err)
			}
			return nil
		})
		if err != nil {
			c.logger.WarnContext(ctx, "docket: parking dormant partitions stopped; the walk parks the rest", "parked", parked, "error", err)
			return parked
		}
		if len(locked) == 0 {
			return parked
		}
		parked += n
		last := locked[len(locked)-1].RingPosition
		if last == nil { // an identity column: never null
			return parked
		}
		after = *last
	}
}
