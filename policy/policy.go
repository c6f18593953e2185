// Package policy holds the ClaimPolicy seam of Docket: an admission engine
// plans one data-only claim statement, the run store executes it, and the
// engine decodes and observes the rows.
package policy

// ClaimPolicy is an admission engine behind RunStore.ClaimDue. Plan says which
// claim function to call with which arguments; the run store executes it
// through the generated accessor; Decode turns the rows into outcomes or a
// typed refusal; Observe summarizes the call without any identity. The set of
// engines is closed: docket.Config accepts Legacy and TenantFair (or
// pointers to them) and refuses any other implementation, since the run
// store holds claim statements for those two functions only.
type ClaimPolicy interface {
	// Name is the engine's admission_mode: "legacy" or "tenant_fair".
	Name() string
	// Plan returns the one statement that serves req.
	Plan(req Request) Plan
	// Decode turns the production rows of a planned call into its result.
	Decode(rows []Row) (Result, error)
	// DecodeTrace turns the rows of a traced call into its trace.
	DecodeTrace(rows []TraceRow) (Trace, error)
	// Observe summarizes a finished call (res and err as Decode returned
	// them, or a zero res with an execution error) for telemetry.
	Observe(req Request, res Result, err error) Observation
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
	// ParkDormant turns on parked partitions for the whole fairness domain:
	// a visit that finds its partition dormant (nothing claimed, nothing due)
	// parks it, and calls walk only the awake ring, so dormant tenants cost
	// nothing. Startup persists it like the default cap. False keeps the
	// full-ring walk exactly; see docs/fairness-parked.md.
	ParkDormant bool
}

// Name implements ClaimPolicy.
func (TenantFair) Name() string { return "tenant_fair" }
