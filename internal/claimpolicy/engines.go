// Package claimpolicy is the seam between the run store and its admission
// engines: an engine plans one data-only claim statement, the run store
// executes it, and the engine decodes and observes the rows. The engines
// are the two of package policy, Legacy and TenantFair; For gives the seam
// of each.
package claimpolicy

import "github.com/docketrun/docket-go/policy"

// Engine is one admission engine's side of a claim call. Plan says which
// claim function to call with which arguments; the run store executes it
// through the generated accessor; Decode turns the rows into outcomes or a
// typed refusal; Observe summarizes the call without any identity.
type Engine interface {
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

// Legacy is the seam of policy.Legacy.
type Legacy struct{}

// TenantFair is the seam of policy.TenantFair. Its plans, decoding and
// observations do not depend on the configured cap or parking, which
// startup persists.
type TenantFair struct{}

// Name implements Engine.
func (Legacy) Name() string { return policy.Legacy{}.Name() }

// Plan implements Engine: one docket_legacy_claim statement.
func (Legacy) Plan(req Request) Plan { return plan(FunctionLegacy, req) }

// Decode implements Engine.
func (Legacy) Decode(rows []Row) (Result, error) { return decodeRows(rows) }

// DecodeTrace implements Engine: Legacy outcomes have no visit, only
// expired outcomes carry a disposition, and there are no inspections.
func (Legacy) DecodeTrace(rows []TraceRow) (Trace, error) {
	return decodeTrace(rows, legacyDisposition, false)
}

// Observe implements Engine: Legacy admits nothing, so its ready leases
// are neither reacquisitions nor promotions.
func (l Legacy) Observe(req Request, res Result, err error) Observation {
	return observe(l.Name(), false, req, res, err)
}

// Name implements Engine.
func (TenantFair) Name() string { return policy.TenantFair{}.Name() }

// Plan implements Engine: one docket_tenant_fair_claim statement.
func (TenantFair) Plan(req Request) Plan { return plan(FunctionTenantFair, req) }

// Decode implements Engine.
func (TenantFair) Decode(rows []Row) (Result, error) { return decodeRows(rows) }

// DecodeTrace implements Engine: outcomes carry their visit and the
// disposition of their class, and every visit has an inspection.
func (TenantFair) DecodeTrace(rows []TraceRow) (Trace, error) {
	return decodeTrace(rows, tenantFairDisposition, true)
}

// Observe implements Engine: ready leases are reacquisitions or
// promotions.
func (t TenantFair) Observe(req Request, res Result, err error) Observation {
	return observe(t.Name(), true, req, res, err)
}
