// Package policy holds what an application configures and reads of Docket's
// admission engines: the two engines, Legacy and TenantFair, the value
// docket.Config.ClaimPolicy takes, and the vocabulary of claim outcomes,
// traces and refusals. How an engine plans a claim statement and reads its
// rows is internal to Docket.
package policy

// ClaimPolicy is an admission engine behind RunStore.ClaimDue: Legacy{} or
// TenantFair{...}, or a pointer to either. The set of engines is closed and
// the interface is sealed: it can be named and passed, not implemented,
// since the run store holds claim statements for those two engines only.
type ClaimPolicy interface {
	// Name is the engine's admission_mode: "legacy" or "tenant_fair".
	Name() string
	// claimPolicy seals the interface to this package's engines.
	claimPolicy()
}

// Legacy is the tenant-blind, oldest-first engine; the default only for
// tenant mode none. It never writes admission markers.
type Legacy struct{}

// Name implements ClaimPolicy.
func (Legacy) Name() string { return "legacy" }

func (Legacy) claimPolicy() {}

// TenantFair is the exact per-tenant admission engine with bounded fair
// rotation across tenants.
type TenantFair struct {
	// DefaultMaxActiveRuns is the configured default cap, in 1..2147483647.
	// Startup persists it; per-scope overrides are runtime state.
	DefaultMaxActiveRuns int
	// ParkDormant turns on parked partitions for the whole fairness domain:
	// a visit that finds its partition dormant (nothing claimed, nothing due)
	// parks it, and calls walk only the awake ring, so dormant tenants cost
	// nothing. Startup persists it like the default cap. False keeps the
	// full-ring walk exactly; see docs/fairness-parked.md.
	ParkDormant bool
}

// Name implements ClaimPolicy.
func (TenantFair) Name() string { return "tenant_fair" }

func (TenantFair) claimPolicy() {}
