package policy

// Plan implements ClaimPolicy: one docket_legacy_claim statement.
func (Legacy) Plan(req Request) Plan { return plan(FunctionLegacy, req) }

// Decode implements ClaimPolicy.
func (Legacy) Decode(rows []Row) (Result, error) { return decodeRows(rows) }

// DecodeTrace implements ClaimPolicy: Legacy outcomes have no visit, only
// expired outcomes carry a disposition, and there are no inspections.
func (Legacy) DecodeTrace(rows []TraceRow) (Trace, error) {
	return decodeTrace(rows, legacyDisposition, false)
}

// Observe implements ClaimPolicy: Legacy admits nothing, so its ready leases
// are neither reacquisitions nor promotions.
func (l Legacy) Observe(req Request, res Result, err error) Observation {
	return observe(l.Name(), false, req, res, err)
}
