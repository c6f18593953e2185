package policy

// The logical-work budgets of one TenantFair claim call (see
// docs/claim-algorithm.md, "Budgets"). The claim function in db/functions
// repeats S, Q and K as constants; these are the Go view for tests,
// benchmarks and the reference model.
const (
	// InspectionsPerCall is S: the visits of an unfilled call.
	InspectionsPerCall = 32
	// OutcomesPerGrant is Q: the outcomes one grant may commit.
	OutcomesPerGrant = 8
	// FrozenPerVisit is K: the run ids one visit may freeze and try to lock.
	FrozenPerVisit = 16
)

// Per-call ceilings derived from the budgets. Caller demand may lower them.
const (
	// GrantsPerCall bounds the grants of one call: one per inspection.
	GrantsPerCall = InspectionsPerCall
	// RunLockAttemptsPerCall bounds the exact-key run-lock attempts of one call.
	RunLockAttemptsPerCall = InspectionsPerCall * FrozenPerVisit
	// OutcomesPerCall bounds the outcomes (mutation inputs) of one call. Legacy
	// applies the same ceiling.
	OutcomesPerCall = InspectionsPerCall * OutcomesPerGrant
)
