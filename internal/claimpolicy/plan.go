package claimpolicy

import (
	"time"

	"github.com/docketrun/docket-go/policy"
)

// Function names the claim function a Plan calls.
type Function int

const (
	// FunctionTenantFair is docket_tenant_fair_claim.
	FunctionTenantFair Function = iota + 1
	// FunctionLegacy is docket_legacy_claim.
	FunctionLegacy
)

// String returns the SQL name of the function.
func (f Function) String() string {
	switch f {
	case FunctionTenantFair:
		return "docket_tenant_fair_claim"
	case FunctionLegacy:
		return "docket_legacy_claim"
	}
	return "invalid"
}

// Request is a validated claim request in the units of the claim functions.
// The run store validates the public request before building one.
type Request struct {
	// Now is the claim time: due work has wake_at <= Now, leases get claimed_at = Now.
	Now time.Time
	// Cutoff is Now minus the orphan TTL: claims older than it are expired.
	Cutoff time.Time
	// Demand is the number of outcomes wanted, >= 1.
	Demand int32
	// MaxAttempts poisons a candidate whose claim_attempts reached it, >= 1.
	MaxAttempts int32
	// Preference is the advisory class preference.
	Preference policy.Preference
	// Trace asks for the identity-bearing inspection rows (trusted callers only).
	Trace bool
	// AsyncCommit asks for a claim statement that turns synchronous_commit
	// off for its own implicit transaction only. Set it only for a statement
	// that commits on its own, never inside a caller's transaction; a trace
	// request ignores it.
	AsyncCommit bool
}

// Args are the bound arguments of a claim statement. The fields match the
// generated parameter struct of every claim query, so the run store converts
// Args to it directly.
type Args struct {
	Now         time.Time
	Cutoff      time.Time
	Demand      int32
	MaxAttempts int32
	Preference  *string
}

// Plan is the one statement that serves a claim request: which claim function
// to call, whether in trace mode, whether it commits asynchronously, and its
// bound arguments. It is data only; the run store executes it through the
// generated accessor.
type Plan struct {
	// Function is the claim function to call.
	Function Function
	// Trace selects the traced query, which returns every row and column.
	Trace bool
	// AsyncCommit selects the production query that commits its implicit
	// transaction without waiting for the WAL flush. Never set with Trace.
	AsyncCommit bool
	// Args are the bound arguments.
	Args Args
}

// plan binds req to fn. A trace plan never carries AsyncCommit: it serves
// trusted inspection, not throughput, and commits as the session says.
func plan(fn Function, req Request) Plan {
	var preference *string
	if req.Preference != policy.PreferNone {
		p := string(req.Preference)
		preference = &p
	}
	return Plan{
		Function:    fn,
		Trace:       req.Trace,
		AsyncCommit: req.AsyncCommit && !req.Trace,
		Args: Args{
			Now:         req.Now,
			Cutoff:      req.Cutoff,
			Demand:      req.Demand,
			MaxAttempts: req.MaxAttempts,
			Preference:  preference,
		},
	}
}
