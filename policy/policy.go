// Package policy holds the ClaimPolicy seam of Docket: an admission engine
// plans one data-only claim statement, the run store executes it, and the
// engine decodes and observes the rows.
package policy

// ClaimPolicy is an admission engine behind RunStore.ClaimDue.
type ClaimPolicy interface {
	// Name is the engine's admission_mode: "legacy" or "tenant_fair".
	Name() string
}

// Legacy is the tenant-blind, oldest-first engine; the default only for
// tenant mode none. It never writes admission markers.
type Legacy struct{}

// Name implements ClaimPolicy.
func (Legacy) Name() string { return "legacy" }

// TenantFair is the exact per-tenant admission engine with bounded fair
// rotation across tenants.
type TenantFair struct {
	// DefaultMaxActiveRuns is the configured default cap, in 1..2147483647.
	// Startup persists it; per-scope overrides are runtime state.
	DefaultMaxActiveRuns int
}

// Name implements ClaimPolicy.
func (TenantFair) Name() string { return "tenant_fair" }
