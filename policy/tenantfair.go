package policy

// Plan implements ClaimPolicy: one docket_tenant_fair_claim statement.
func (TenantFair) Plan(req Request) Plan { return plan(FunctionTenantFair, req) }

// Decode implements ClaimPolicy.
func (TenantFair) Decode(rows []Row) (Result, error) { return decodeRows(rows) }

// DecodeTrace implements ClaimPolicy: outcomes carry their visit and the
// disposition of their class, and every visit has an inspection.
func (TenantFair) DecodeTrace(rows []TraceRow) (Trace, error) {
	return decodeTrace(rows, tenantFairDisposition, true)
}

// Observe implements ClaimPolicy: ready leases are reacquisitions or
// promotions.
func (t TenantFair) Observe(req Request, res Result, err error) Observation {
	return observe(t.Name(), true, req, res, err)
}
