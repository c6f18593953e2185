package docket

import (
	"context"
	"fmt"
	"time"
)

// CapSource says where a scope's effective cap comes from.
type CapSource string

const (
	// CapFromDefault means the scope inherits the policy default.
	CapFromDefault CapSource = "default"
	// CapFromOverride means the scope has its own override.
	CapFromOverride CapSource = "override"
)

// ClaimPolicyInspection is one consistent, token-free view of a scope's
// effective claim policy and admission state.
type ClaimPolicyInspection struct {
	// Scope is the inspected owner.
	Scope Scope
	// AdmissionMode is the active engine: "legacy" or "tenant_fair".
	AdmissionMode string
	// EffectiveMaxActiveRuns is the override if set, else the default.
	EffectiveMaxActiveRuns int
	// Source says which of the two EffectiveMaxActiveRuns is.
	Source CapSource
	// PolicyVersion is the version of the policy default.
	PolicyVersion int64
	// PartitionVersion is the scope's override version; 0 without a partition.
	PartitionVersion int64
	// AdmissionEpoch counts the scope's committed nonempty grants.
	AdmissionEpoch int64
	// RingPosition is the scope's immutable ring position; 0 without a partition.
	RingPosition int64
	// Unfinished is the exact count of the scope's running and waiting runs.
	Unfinished int64
	// ParkDormant reports whether the domain walks only its awake ring.
	ParkDormant bool
	// Parked reports whether the scope's partition is parked: calls skip it
	// until ParkedUntil, or until a write wakes it.
	Parked bool
	// ParkedUntil is the time a parked partition wakes; nil when it is not
	// parked or parked until a write (nothing of it is scheduled).
	ParkedUntil *time.Time
	// Paused reports whether an operator paused the scope (PauseTenant):
	// TenantFair admits and leases none of its runs until it is resumed.
	Paused bool
	// Queued counts healthy running rows that are due, unclaimed and unadmitted.
	Queued int64
	// AdmittedReady counts healthy running rows that are due, unclaimed and admitted.
	AdmittedReady int64
	// AdmittedClaimed counts healthy running rows that are claimed and admitted.
	AdmittedClaimed int64
	// Admitted counts every admitted identity (healthy running with a marker).
	Admitted int64
	// Debt is max(Admitted - EffectiveMaxActiveRuns, 0): admissions over the
	// cap that block queued promotion until they finish.
	Debt int64
}

// InspectClaimPolicy returns the effective cap of scope, its source and
// versions, its epoch and ring membership, and its admission counts, all from
// one snapshot ("due" means wake_at at or before the database's now). A scope
// that never had a partition reads as version 0 with no ring position. A scope
// with no override in a domain whose policy was never initialized has no
// effective cap: ErrNotInitialized.
func (c *store) InspectClaimPolicy(ctx context.Context, scope Scope) (ClaimPolicyInspection, error) {
	return timed(ctx, c.telemetry, opInspectClaimPolicy, func() (ClaimPolicyInspection, error) {
		out, err := c.inspectScope(ctx, scope)
		if err != nil {
			return ClaimPolicyInspection{}, err
		}
		if out.Source == "" {
			return ClaimPolicyInspection{}, fmt.Errorf("%w: %s has no override and the policy has no default", ErrNotInitialized, scope)
		}
		return out, nil
	})
}

// inspectScope reads what InspectClaimPolicy returns, except that a scope
// without an effective cap (no override, no initialized default) reads with
// EffectiveMaxActiveRuns 0, an empty Source and no debt instead of failing.
func (c *store) inspectScope(ctx context.Context, scope Scope) (ClaimPolicyInspection, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return ClaimPolicyInspection{}, err
	}
	row, err := c.queries.InspectClaimScope(ctx, key)
	if err != nil {
		return ClaimPolicyInspection{}, fmt.Errorf("docket: inspecting claim policy: %w", err)
	}
	out := ClaimPolicyInspection{
		Scope:            scope,
		AdmissionMode:    row.AdmissionMode,
		PolicyVersion:    row.PolicyVersion,
		PartitionVersion: row.PartitionVersion,
		AdmissionEpoch:   row.AdmissionEpoch,
		Unfinished:       row.UnfinishedCount,
		ParkDormant:      row.ParkDormant,
		Parked:           row.Parked,
		ParkedUntil:      row.ParkedUntil,
		Paused:           row.Paused,
		Queued:           row.Queued,
		AdmittedReady:    row.AdmittedReady,
		AdmittedClaimed:  row.AdmittedClaimed,
		Admitted:         row.Admitted,
	}
	if row.RingPosition != nil {
		out.RingPosition = *row.RingPosition
	}
	switch {
	case row.OverrideMaxActive != nil:
		out.EffectiveMaxActiveRuns, out.Source = int(*row.OverrideMaxActive), CapFromOverride
	case row.DefaultMaxActive != nil:
		out.EffectiveMaxActiveRuns, out.Source = int(*row.DefaultMaxActive), CapFromDefault
	default:
		return out, nil
	}
	out.Debt = max(out.Admitted-int64(out.EffectiveMaxActiveRuns), 0)
	return out, nil
}
