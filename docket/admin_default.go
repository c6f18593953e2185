package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ClaimPolicyDefault is the singleton claim policy of a fairness domain.
type ClaimPolicyDefault struct {
	// AdmissionMode is the active engine: "legacy" or "tenant_fair".
	AdmissionMode string
	// MaxActiveRuns is the persisted default cap; 0 until initialized.
	MaxActiveRuns int
	// ConfiguredMaxActiveRuns is the cap last synchronized from application
	// configuration at startup; 0 until then.
	ConfiguredMaxActiveRuns int
	// ParkDormant reports whether the domain walks only its awake ring
	// (parked partitions); see docs/fairness-parked.md.
	ParkDormant bool
	// ConfiguredParkDormant is the ParkDormant last synchronized from
	// application configuration at startup (false until then).
	ConfiguredParkDormant bool
	// Version counts writes of the default and of ParkDormant;
	// compare-and-set writes expect it.
	Version int64
	// Initialized reports whether a TenantFair start has persisted a default.
	Initialized bool
	// UpdatedAt is the time of the row's last write.
	UpdatedAt time.Time
}

// FetchClaimPolicyDefault returns the persisted default cap, its version, the
// active engine, the last configured cap and whether the policy has been
// initialized.
func (c *store) FetchClaimPolicyDefault(ctx context.Context) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opFetchClaimPolicyDefault, func() (ClaimPolicyDefault, error) {
		row, err := c.queries.GetClaimPolicy(ctx)
		if err != nil {
			return ClaimPolicyDefault{}, fmt.Errorf("docket: reading claim policy: %w", err)
		}
		return claimPolicyDefaultOf(row), nil
	})
}

// PutClaimPolicyDefault changes the persisted default cap at runtime and
// bumps its version by one. The configured cap is left alone, so restarting
// with unchanged configuration keeps this value; changing the configured cap
// overwrites it at the next start. Only an initialized policy has a default to
// change: before the first TenantFair start this fails with ErrNotInitialized.
// An invalid cap fails with ErrInvalidCap and a version mismatch with
// ErrStale; either way nothing is written.
func (c *store) PutClaimPolicyDefault(ctx context.Context, maxActiveRuns int, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return timed(ctx, c.telemetry, opPutClaimPolicyDefault, func() (ClaimPolicyDefault, error) {
		capValue, err := checkedCap(maxActiveRuns)
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		if err := opts.validate(); err != nil {
			return ClaimPolicyDefault{}, err
		}
		var written dbgen.DocketClaimPolicy
		err = c.inTx(ctx, func(q *dbgen.Queries) error {
			current, err := q.LockClaimPolicy(ctx)
			if err != nil {
				return fmt.Errorf("docket: locking claim policy: %w", err)
			}
			if current.InitializedAt == nil {
				return fmt.Errorf("%w: no TenantFair start has persisted a default yet", ErrNotInitialized)
			}
			if err := opts.check(current.PolicyVersion); err != nil {
				return err
			}
			written, err = q.PutClaimPolicyDefault(ctx, capValue)
			if err != nil {
				return fmt.Errorf("docket: writing claim policy default: %w", err)
			}
			return nil
		})
		if err != nil {
			return ClaimPolicyDefault{}, err
		}
		return claimPolicyDefaultOf(written), nil
	})
}

func claimPolicyDefaultOf(row dbgen.DocketClaimPolicy) ClaimPolicyDefault {
	return ClaimPolicyDefault{
		AdmissionMode:           row.AdmissionMode,
		MaxActiveRuns:           intOrZero(row.MaxActive),
		ConfiguredMaxActiveRuns: intOrZero(row.ConfiguredMaxActive),
		ParkDormant:             row.ParkDormant,
		ConfiguredParkDormant:   row.ConfiguredParkDormant,
		Version:                 row.PolicyVersion,
		Initialized:             row.InitializedAt != nil,
		UpdatedAt:               row.UpdatedAt,
	}
}

// intOrZero reads a nullable cap column; caps are never 0, so 0 means unset.
func intOrZero(v *int32) int {
	if v == nil {
		return 0
	}
	return int(*v)
}
