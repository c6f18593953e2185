package claimpolicy_test

import (
	"testing"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/policy"
)

// A production request's AsyncCommit reaches its plan unchanged; a trace plan
// never carries it, whatever the request says. The rest of the plan does not
// depend on it.
func TestPlanCarriesAsyncCommit(t *testing.T) {
	engines := []struct {
		engine claimpolicy.Engine
		fn     claimpolicy.Function
	}{
		{claimpolicy.TenantFair{}, claimpolicy.FunctionTenantFair},
		{claimpolicy.Legacy{}, claimpolicy.FunctionLegacy},
	}
	cases := []struct {
		name               string
		trace, async, want bool
	}{
		{"production, default", false, false, false},
		{"production, asynchronous", false, true, true},
		{"trace", true, false, false},
		{"trace ignores asynchronous", true, true, false},
	}
	for _, e := range engines {
		for _, tc := range cases {
			t.Run(e.engine.Name()+"/"+tc.name, func(t *testing.T) {
				req := claimpolicy.Request{
					Now: testNow, Cutoff: testNow.Add(-1), Demand: 4, MaxAttempts: 7,
					Preference: policy.PreferReady, Trace: tc.trace, AsyncCommit: tc.async,
				}
				p := e.engine.Plan(req)
				if p.AsyncCommit != tc.want || p.Trace != tc.trace || p.Function != e.fn {
					t.Fatalf("plan of %+v = %+v, want AsyncCommit %v", req, p, tc.want)
				}
				req.AsyncCommit = false
				base := e.engine.Plan(req)
				if !p.Args.Now.Equal(base.Args.Now) || !p.Args.Cutoff.Equal(base.Args.Cutoff) || p.Args.Demand != base.Args.Demand ||
					p.Args.MaxAttempts != base.Args.MaxAttempts || *p.Args.Preference != *base.Args.Preference {
					t.Fatalf("AsyncCommit changed the arguments: %+v, without it %+v", p.Args, base.Args)
				}
			})
		}
	}
}
