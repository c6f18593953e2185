package claimpolicy_test

import (
	"errors"
	"testing"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/policy"
)

func TestPlanBindsArguments(t *testing.T) {
	req := claimpolicy.Request{Now: testNow, Cutoff: testNow.Add(-1), Demand: 3, MaxAttempts: 5, Preference: policy.PreferExpired, Trace: true}
	p := claimpolicy.TenantFair{}.Plan(req)
	if p.Function != claimpolicy.FunctionTenantFair || !p.Trace || p.Args.Demand != 3 || p.Args.MaxAttempts != 5 ||
		!p.Args.Now.Equal(testNow) || !p.Args.Cutoff.Equal(req.Cutoff) || p.Args.Preference == nil || *p.Args.Preference != "expired" {
		t.Fatalf("plan = %+v", p)
	}
	req.Preference, req.Trace = policy.PreferNone, false
	p = claimpolicy.Legacy{}.Plan(req)
	if p.Function != claimpolicy.FunctionLegacy || p.Trace || p.Args.Preference != nil {
		t.Fatalf("plan = %+v", p)
	}
}

func TestObserveCountsWithoutIdentity(t *testing.T) {
	admitted := leaseRow()
	admitted.WorkClass = ptr("admitted_ready")
	expired := leaseRow()
	expired.WorkClass = ptr("expired")
	rows := []claimpolicy.Row{leaseRow(), admitted, expired, poisonRow()}
	req := claimpolicy.Request{Demand: 4}

	res, err := claimpolicy.TenantFair{}.Decode(rows)
	obs := claimpolicy.TenantFair{}.Observe(req, res, err)
	want := claimpolicy.Observation{Policy: "tenant_fair", Result: claimpolicy.ResultClaimed, Preference: "none", Demand: 4,
		Outcomes: 4, Leases: 3, Poisoned: 1, AdmittedReady: 1, QueuedReady: 1, Expired: 2,
		Reacquisitions: 1, Promotions: 1, Steals: 1}
	if obs != want {
		t.Fatalf("TenantFair observation = %+v, want %+v", obs, want)
	}

	res, err = claimpolicy.Legacy{}.Decode(rows)
	obs = claimpolicy.Legacy{}.Observe(req, res, err)
	want.Policy, want.Reacquisitions, want.Promotions = "legacy", 0, 0
	if obs != want {
		t.Fatalf("Legacy observation = %+v, want %+v", obs, want)
	}
}

func TestObserveResultsAndFallback(t *testing.T) {
	fair := claimpolicy.TenantFair{}
	one := claimpolicy.Request{Demand: 1, Preference: policy.PreferExpired}
	res, _ := fair.Decode([]claimpolicy.Row{leaseRow()})
	if obs := fair.Observe(one, res, nil); !obs.FallbackUsed || obs.Preference != "expired" {
		t.Fatalf("fallback observation = %+v", obs)
	}
	one.Preference = policy.PreferReady
	if obs := fair.Observe(one, res, nil); obs.FallbackUsed {
		t.Fatalf("preferred class observed as fallback: %+v", obs)
	}
	if obs := fair.Observe(one, claimpolicy.Result{}, nil); obs.Result != claimpolicy.ResultEmpty {
		t.Fatalf("empty observation = %+v", obs)
	}
	_, err := fair.Decode([]claimpolicy.Row{{RowKind: ptr("error"), ErrorReason: ptr("lock_contention")}})
	if obs := fair.Observe(one, claimpolicy.Result{}, err); obs.Result != claimpolicy.ResultUnavailable ||
		obs.Reason != "lock_contention" || obs.ContentionPhase != claimpolicy.ContentionPolicyCursor {
		t.Fatalf("contention observation = %+v", obs)
	}
	if obs := fair.Observe(one, claimpolicy.Result{}, errors.New("connection reset")); obs.Result != claimpolicy.ResultError || obs.Reason != "" {
		t.Fatalf("error observation = %+v", obs)
	}
}
