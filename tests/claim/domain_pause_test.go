package claim

import (
	"errors"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestDomainPause pauses a whole domain, under each engine: while paused a
// claim call returns nothing, visits nothing and leaves the cursor and every
// partition as they were; the holder of a claimed run commits as usual;
// unclaimed running runs show the phase paused. A stale write changes
// nothing. After the resume the runs are claimed again, in their order, and
// a tenant paused beside the domain stays paused.
func TestDomainPause(t *testing.T) {
	for _, engine := range []string{"tenant_fair", "legacy"} {
		t.Run(engine, func(t *testing.T) {
			var e *testkit.ClaimEnv
			if engine == "legacy" {
				e = testkit.NewClaimLegacy(t)
			} else {
				e = testkit.NewClaimTenantFair(t, 10)
			}
			ctx := testkit.Context(t)
			early := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
			e.Due("a", "a-1", early)
			e.Due("a", "a-2", early.Add(time.Second))
			e.Due("b", "b-1", early.Add(2*time.Second))
			first, err := e.Client.ClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
			if err != nil || len(first.Leases) != 1 || first.Leases[0].RunID != "a-1" {
				t.Fatalf("first claim = %+v, %v; want a-1", first, err)
			}
			lease := first.Leases[0]

			before, err := e.Client.FetchClaimPolicyDefault(ctx)
			if err != nil {
				t.Fatal(err)
			}
			version := before.Version
			paused, err := e.Client.PauseDomain(ctx, docket.ClaimPolicyWriteOptions{ExpectedVersion: &version})
			if err != nil || !paused.Paused || paused.Version != version+1 {
				t.Fatalf("PauseDomain = %+v, %v; want paused at version %d", paused, err, version+1)
			}
			if _, err := e.Client.ResumeDomain(ctx, docket.ClaimPolicyWriteOptions{ExpectedVersion: &version}); !errors.Is(err, docket.ErrStale) {
				t.Fatalf("stale ResumeDomain = %v, want ErrStale", err)
			}
			snapshot := e.Snapshot()
			got, err := e.Client.ClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
			if err != nil || got.Outcomes() != 0 {
				t.Fatalf("claim while paused = %+v, %v; want nothing", got, err)
			}
			if engine == "tenant_fair" {
				if tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone)); len(tr.Inspections) != 0 || len(tr.Outcomes) != 0 {
					t.Fatalf("traced claim while paused = %+v, want no visit", tr)
				}
			}
			if after := e.Snapshot(); after != snapshot {
				t.Fatalf("claims while paused changed the domain:\n%s\nwant\n%s", after, snapshot)
			}
			for id, want := range map[string]string{"a-1": "executing", "a-2": "paused", "b-1": "paused"} {
				var phase string
				if err := e.Pool.QueryRow(ctx, `select docket_run_phase(r, now()) from docket_runs r where run_id = $1`, id).Scan(&phase); err != nil || phase != want {
					t.Fatalf("phase of %s while paused = %q, %v; want %q", id, phase, err, want)
				}
			}
			done, err := e.Client.Commit(ctx, docket.CommitRequest{
				Holder:      docket.Holder{Scope: docket.Tenant("a"), RunID: "a-1", Token: lease.ClaimToken},
				ExpectedSeq: lease.CheckpointSeq,
				Disposition: docket.ReleaseTerminal(docket.StatusDone),
			})
			if err != nil || done.Status != docket.StatusDone {
				t.Fatalf("commit while paused = %+v, %v; want done", done, err)
			}

			if _, err := e.Client.PauseTenant(ctx, docket.Tenant("b"), docket.ClaimPolicyWriteOptions{}); err != nil {
				t.Fatal(err)
			}
			resumed, err := e.Client.ResumeDomain(ctx, docket.ClaimPolicyWriteOptions{})
			if err != nil || resumed.Paused {
				t.Fatalf("ResumeDomain = %+v, %v", resumed, err)
			}
			got, err = e.Client.ClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
			want := []string{"a-2"}
			if engine == "legacy" {
				want = []string{"a-2", "b-1"} // Legacy ignores a tenant's pause
			}
			var ids []string
			for _, l := range got.Leases {
				ids = append(ids, l.RunID)
			}
			testkit.ClaimExpectIDs(t, "after the resume", ids, want)
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
