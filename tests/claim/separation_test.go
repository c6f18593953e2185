package claim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// base is the base time of the separation control, the same as the
// model's: hot-1..hot-N are due at base + 0..N-1 s, the target at
// base + N s, and call k claims at base + N + k s.
var base = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// TestSeparationModelEqualsDatabase runs the deterministic Legacy separation
// control (docs/claim-algorithm.md, "The bounds") for N = 2, 5 and 50 on the
// reference model (oracle.Separation) and on the database with each engine.
// Legacy must bypass the target exactly N times on both; TenantFair must give
// the same bypass, the same number of hot grants and exactly the model's
// committed trace, which passes oracle.Check with L = 0.
func TestSeparationModelEqualsDatabase(t *testing.T) {
	for _, n := range []int{2, 5, 50} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			t.Parallel()
			want, err := oracle.Separation(n)
			if err != nil {
				t.Fatal(err)
			}
			if want.LegacyBypass != n {
				t.Fatalf("model Legacy bypass = %d, want exactly %d", want.LegacyBypass, n)
			}
			legacy, _, _ := run(t, testkit.LegacyConfig(), n)
			if legacy != n {
				t.Fatalf("database Legacy bypass = %d, want exactly %d", legacy, n)
			}
			bypass, grants, events := run(t, testkit.TenantFairConfig(n+1), n)
			if bypass != want.TenantFairBypass || grants != want.TenantFairGrants {
				t.Fatalf("database TenantFair bypass %d with %d hot grants, model %d with %d",
					bypass, grants, want.TenantFairBypass, want.TenantFairGrants)
			}
			if !slices.Equal(events, want.TenantFairEvents) {
				t.Fatalf("database TenantFair trace\n %+v\ndiffers from the model's\n %+v", events, want.TenantFairEvents)
			}
			obs, err := oracle.Check(events, want.Window)
			if err != nil {
				t.Fatalf("database trace: %v", err)
			}
			if !obs.TargetGranted || obs.CompetingGrants != int64(grants) || obs.CompetingOutcomes != int64(bypass) {
				t.Fatalf("checker observed %+v, want the target granted after %d hot grants and %d hot outcomes", obs, grants, bypass)
			}
		})
	}
}

// run seeds the control on a fresh database with the engine of cfg and
// claims with demand one, completing every outcome before the next call,
// until the target's first outcome. It returns the hot outcomes and hot
// grants before it and the TenantFair trace (calls numbered from 1) through
// the call of the target grant.
func run(t *testing.T, cfg docket.Config, n int) (bypass, grants int, events []oracle.Event) {
	t.Helper()
	ctx := testkit.Context(t)
	client := testkit.OpenClient(t, testkit.NewPool(t), cfg)
	insert := func(tenant, runID string, wake time.Time) {
		_, err := client.InsertRun(ctx, docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: "g",
			GraphHash: "h1", State: []byte(`{}`), WakeAt: wake})
		if err != nil {
			t.Fatalf("insert %s: %v", runID, err)
		}
	}
	for i := range n {
		insert("hot", fmt.Sprintf("hot-%d", i+1), base.Add(time.Duration(i)*time.Second))
	}
	insert("target", "target-1", base.Add(time.Duration(n)*time.Second))

	now := base.Add(time.Duration(n+1) * time.Second)
	for call := 1; call <= 2*n+2; call++ {
		tr, err := client.TraceClaimDue(ctx, docket.ClaimRequest{Now: now, Limit: 1, MaxClaimAttempts: 1 << 30})
		if err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
		for _, in := range tr.Inspections {
			events = append(events, oracle.Event{Call: fmt.Sprint(call), Visit: in.Visit, Demand: in.Demand,
				CursorBefore: in.CursorBefore, CursorAfter: in.CursorAfter, Scope: in.ScopeKey, Position: in.RingPosition,
				Disposition: oracle.Disposition(in.Disposition), Outcomes: in.Outcomes, EpochDelta: int64(in.EpochDelta)})
			if in.Disposition == "grant" && in.ScopeKey == "hot" {
				grants++
			}
		}
		for _, l := range tr.Result.Leases {
			if l.RunID == "target-1" {
				return bypass, grants, events
			}
			bypass++
			if _, err := client.Commit(ctx, docket.CommitRequest{Holder: l.Holder(), ExpectedSeq: l.CheckpointSeq,
				Step: 1, Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
				t.Fatalf("complete %s: %v", l.RunID, err)
			}
		}
		now = now.Add(time.Second)
	}
	t.Fatalf("the target never got an outcome in %d calls", 2*n+2)
	return 0, 0, nil
}
