package policy_test

import (
	"errors"
	"testing"

	"github.com/docketrun/docket-go/policy"
)

func TestPlanBindsArguments(t *testing.T) {
	req := policy.Request{Now: testNow, Cutoff: testNow.Add(-1), Demand: 3, MaxAttempts: 5, Preference: policy.PreferExpired, Trace: true}
	p := policy.TenantFair{DefaultMaxActiveRuns: 2}.Plan(req)
	if p.Function != policy.FunctionTenantFair || !p.Trace || p.Args.Demand != 3 || p.Args.MaxAttempts != 5 ||
		!p.Args.Now.Equal(testNow) || !p.Args.Cutoff.Equal(req.Cutoff) || p.Args.Preference == nil || *p.Args.Preference != "expired" {
		t.Fatalf("plan = %+v", p)
	}
	req.Preference, req.Trace = policy.PreferNone, false
	p = policy.Legacy{}.Plan(req)
	if p.Function != policy.FunctionLegacy || p.Trace || p.Args.Preference != nil {
		t.Fatalf("plan = %+v", p)
	}
}

func TestObserveCountsWithoutIdentity(t *testing.T) {
	admitted := leaseRow()
	admitted.WorkClass = ptr("admitted_ready")
	expired := leaseRow()
	expired.WorkClass = ptr("expired")
	rows := []policy.Row{leaseRow(), admitted, expired, poisonRow()}
	req := policy.Request{Demand: 4}

	res, err := policy.TenantFair{}.Decode(rows)
	obs := policy.TenantFair{}.Observe(req, res, err)
	want := policy.Observation{Policy: "tenant_fair", Result: policy.ResultClaimed, Preference: "none", Demand: 4,
		Outcomes: 4, Leases: 3, Poisoned: 1, AdmittedReady: 1, QueuedReady: 1, Expired: 2,
		Reacquisitions: 1, Promotions: 1, Steals: 1}
	if obs != want {
		t.Fatalf("TenantFair observation = %+v, want %+v", obs, want)
	}

	res, err = policy.Legacy{}.Decode(rows)
	obs = policy.Legacy{}.Observe(req, res, err)
	want.Policy, want.Reacquisitions, want.Promotions = "legacy", 0, 0
	if obs != want {
		t.Fatalf("Legacy observation = %+v, want %+v", obs, want)
	}
}

func TestObserveResultsAndFallback(t *testing.T) {
	fair := policy.TenantFair{}
	one := policy.Request{Demand: 1, Preference: policy.PreferExpired}
	res, _ := fair.Decode([]policy.Row{leaseRow()})
	if obs := fair.Observe(one, res, nil); !obs.FallbackUsed || obs.Preference != "expired" {
		t.Fatalf("fallback observation = %+v", obs)
	}
	one.Preference = policy.PreferReady
	if obs := fair.Observe(one, res, nil); obs.FallbackUsed {
		t.Fatalf("preferred class observed as fallback: %+v", obs)
	}
	if obs := fair.Observe(one, policy.Result{}, nil); obs.Result != policy.ResultEmpty {
		t.Fatalf("empty observation = %+v", obs)
	}
	_, err := fair.Decode([]policy.Row{{RowKind: ptr("error"), ErrorReason: ptr("lock_contention")}})
	if obs := fair.Observe(one, policy.Result{}, err); obs.Result != policy.ResultUnavailable ||
		obs.Reason != "lock_contention" || obs.ContentionPhase != policy.ContentionPolicyCursor {
		t.Fatalf("contention observation = %+v", obs)
	}
	if obs := fair.Observe(one, policy.Result{}, errors.New("connection reset")); obs.Result != policy.ResultError || obs.Reason != "" {
		t.Fatalf("error observation = %+v", obs)
	}
}
