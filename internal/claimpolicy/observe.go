package claimpolicy

import (
	"errors"

	"github.com/docketrun/docket-go/policy"
)

// Observation is the identity-free summary of one claim call for telemetry:
// only bounded enums and counts, never tenant, scope, run, graph, cursor,
// token or call identity.
type Observation struct {
	// Policy is the engine name: "legacy" or "tenant_fair".
	Policy string
	// Result is one of the Result constants.
	Result string
	// Reason is the refusal reason when Result is ResultUnavailable.
	Reason string
	// ContentionPhase is ContentionPolicyCursor for a lock_contention refusal.
	ContentionPhase string
	// Preference is "none", "ready" or "expired".
	Preference string
	// FallbackUsed reports a demand-one call with a preference whose outcome
	// came from the other class.
	FallbackUsed bool
	// Demand is the requested number of outcomes.
	Demand int
	// Outcomes = Leases + Poisoned.
	Outcomes int
	Leases   int
	Poisoned int
	// Outcomes by work class, leases and poisons alike.
	AdmittedReady int
	QueuedReady   int
	Expired       int
	// Reacquisitions are leases of admitted-ready rows (TenantFair only).
	Reacquisitions int
	// Promotions are leases that created an admission (TenantFair only).
	Promotions int
	// Steals are leases of expired claims.
	Steals int
}

// The results of an observed claim call.
const (
	// ResultClaimed: at least one outcome.
	ResultClaimed = "claimed"
	// ResultEmpty: the call committed no outcome.
	ResultEmpty = "empty"
	// ResultUnavailable: the engine refused the call; see Reason.
	ResultUnavailable = "unavailable"
	// ResultError: the call failed otherwise.
	ResultError = "error"
)

// observe summarizes a call of an engine named name; admits says whether the
// engine's ready outcomes are admission transitions (TenantFair).
func observe(name string, admits bool, req Request, res Result, err error) Observation {
	obs := Observation{
		Policy:     name,
		Preference: string(req.Preference),
		Demand:     int(req.Demand),
	}
	if req.Preference == policy.PreferNone {
		obs.Preference = "none"
	}
	var unavailable *UnavailableError
	switch {
	case errors.As(err, &unavailable):
		obs.Result, obs.Reason = ResultUnavailable, unavailable.Reason
		if unavailable.Reason == policy.ReasonLockContention {
			obs.ContentionPhase = ContentionPolicyCursor
		}
		return obs
	case err != nil:
		obs.Result = ResultError
		return obs
	case len(res.Outcomes) == 0:
		obs.Result = ResultEmpty
		return obs
	}
	obs.Result = ResultClaimed
	for _, o := range res.Outcomes {
		obs.Outcomes++
		if o.Poisoned {
			obs.Poisoned++
		} else {
			obs.Leases++
		}
		switch o.Class {
		case policy.ClassAdmittedReady:
			obs.AdmittedReady++
			if admits && !o.Poisoned {
				obs.Reacquisitions++
			}
		case policy.ClassQueuedReady:
			obs.QueuedReady++
			if admits && !o.Poisoned {
				obs.Promotions++
			}
		case policy.ClassExpired:
			obs.Expired++
			if !o.Poisoned {
				obs.Steals++
			}
		}
	}
	if req.Demand == 1 && req.Preference != policy.PreferNone {
		gotExpired := res.Outcomes[0].Class == policy.ClassExpired
		obs.FallbackUsed = gotExpired != (req.Preference == policy.PreferExpired)
	}
	return obs
}
