package claim

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// TestTenantFairPausedTenant pauses a tenant with a claimed, an admitted
// ready, an expired and two queued runs, and a second tenant whose only run
// is claimed (so the window's probe finds no page and the empty-run lock
// refuses it). While paused, every visit of both is "paused" and nothing of
// them is leased or stolen, the other tenant is served, and the paused
// tenant's holder commits normally. A stale pause or resume changes nothing.
// After the resume its runs are leased again: the expired claim and the
// ready run, then the queue in FIFO order.
func TestTenantFairPausedTenant(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ctx := testkit.Context(t)
	early := testkit.ClaimBase.Add(-time.Hour)
	e.Due("a", "a-1", early)
	e.Due("b", "b-1", early)
	e.Claimed("c", "c-held", testkit.ClaimBase.Add(-time.Minute), true)
	e.Due("a", "a-2", early.Add(time.Second))
	e.Due("a", "a-3", early.Add(2*time.Second))
	e.Due("a", "a-4", early.Add(3*time.Second))
	e.Due("b", "b-2", early.Add(time.Second))

	first := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "first call", testkit.ClaimOutcomeIDs(first), []string{"a-1"})
	lease := first.Result.Leases[0]
	e.MarkAdmitted("a-2")
	e.Claimed("a", "a-expired", testkit.ClaimBase.Add(-2*time.Hour), true)

	zero := int64(0)
	paused, err := e.Client.PauseTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{ExpectedVersion: &zero})
	if err != nil || !paused.Paused || paused.Version != 1 {
		t.Fatalf("PauseTenant(a) = %+v, %v; want paused at version 1", paused, err)
	}
	if _, err := e.Client.PauseTenant(ctx, docket.Tenant("c"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PauseTenant(c): %v", err)
	}
	// A stale write is refused and changes nothing.
	var stale *docket.StaleVersionError
	if _, err := e.Client.ResumeTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{ExpectedVersion: &zero}); !errors.Is(err, docket.ErrStale) ||
		!errors.As(err, &stale) || stale.Expected != 0 || stale.Current != 1 {
		t.Fatalf("stale ResumeTenant(a) = %v, want ErrStale expected 0 current 1", err)
	}
	expectPartition(t, e, "a", true, 1)

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	var wantPositions []int64
	var wantDispositions []policy.Disposition
	for v := range policy.InspectionsPerCall {
		pos := []int64{2, 3, 1}[v%3]
		wantPositions = append(wantPositions, pos)
		switch {
		case pos != 2:
			wantDispositions = append(wantDispositions, policy.DispositionPaused)
		case v == 0:
			wantDispositions = append(wantDispositions, policy.DispositionGrant)
		default:
			wantDispositions = append(wantDispositions, policy.DispositionEmptyPage)
		}
	}
	if got := positions(tr); !slices.Equal(got, wantPositions) {
		t.Fatalf("positions while paused = %v, want %v", got, wantPositions)
	}
	if got := dispositions(tr); !slices.Equal(got, wantDispositions) {
		t.Fatalf("dispositions while paused = %v, want %v", got, wantDispositions)
	}
	testkit.ClaimExpectIDs(t, "outcomes while paused", testkit.ClaimOutcomeIDs(tr), []string{"b-1", "b-2"})
	if got := e.Epochs(); got["a"] != 1 || got["b"] != 1 || got["c"] != 0 {
		t.Fatalf("epochs = %v, want a 1, b 1, c 0", got)
	}

	// The paused tenant's holder commits as usual.
	done, err := e.Client.Commit(ctx, docket.CommitRequest{
		Holder:      docket.Holder{Scope: docket.Tenant("a"), RunID: "a-1", Token: lease.ClaimToken},
		ExpectedSeq: lease.CheckpointSeq,
		Disposition: docket.ReleaseTerminal(docket.StatusDone),
	})
	if err != nil || done.Status != docket.StatusDone {
		t.Fatalf("commit of a-1 while paused = %+v, %v; want done", done, err)
	}

	inspected, err := e.Client.InspectClaimPolicy(ctx, docket.Tenant("a"))
	// Inspection counts due runs on the database's clock, before the test
	// clock, so only the unfinished and admitted counts are checked.
	if err != nil || !inspected.Paused || inspected.PartitionVersion != 1 || inspected.Unfinished != 4 ||
		inspected.Admitted != 2 || inspected.AdmittedClaimed != 1 {
		t.Fatalf("InspectClaimPolicy(a) = %+v, %v; want paused at version 1, 4 unfinished, 2 admitted, 1 claimed", inspected, err)
	}

	one := int64(1)
	resumed, err := e.Client.ResumeTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{ExpectedVersion: &one})
	if err != nil || resumed.Paused || resumed.Version != 2 {
		t.Fatalf("ResumeTenant(a) = %+v, %v; want resumed at version 2", resumed, err)
	}
	expectPartition(t, e, "a", false, 2)
	expectPartition(t, e, "c", true, 1)
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes after the resume", testkit.ClaimOutcomeIDs(tr), []string{"a-expired", "a-2", "a-3", "a-4"})
	if got := dispositions(tr)[:2]; !slices.Equal(got, []policy.Disposition{policy.DispositionGrant, policy.DispositionEmptyPage}) {
		t.Fatalf("first dispositions after the resume = %v, want grant then empty_page", got)
	}
}

// expectPartition checks a partition's paused flag and version in the table.
func expectPartition(t *testing.T, e *testkit.ClaimEnv, tenant string, paused bool, version int64) {
	t.Helper()
	var gotPaused bool
	var gotVersion int64
	if err := e.Pool.QueryRow(testkit.Context(t), `select paused, partition_version from docket_claim_partitions where scope_key = $1`,
		tenant).Scan(&gotPaused, &gotVersion); err != nil {
		t.Fatalf("read partition %s: %v", tenant, err)
	}
	if gotPaused != paused || gotVersion != version {
		t.Fatalf("partition %s: paused %v version %d, want %v and %d", tenant, gotPaused, gotVersion, paused, version)
	}
}

// TestLegacyIgnoresPausedTenant: the Legacy engine does not read the pause.
func TestLegacyIgnoresPausedTenant(t *testing.T) {
	e := testkit.NewClaimLegacy(t)
	e.Due("a", "a-1", testkit.ClaimBase.Add(-time.Hour))
	if _, err := e.Client.PauseTenant(testkit.Context(t), docket.Tenant("a"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PauseTenant(a): %v", err)
	}
	expectPartition(t, e, "a", true, 1)
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "Legacy outcomes of a paused tenant", testkit.ClaimOutcomeIDs(tr), []string{"a-1"})
}

// TestTenantFairPausedWorkReservesNoSlot: the class reservation does not
// count a paused partition's work. Only the paused tenant has an expired
// claim, so the expired class has no servable work, and a call of demand 2
// takes both ready runs of the other tenant instead of keeping its last
// slot for a class no visit can serve.
func TestTenantFairPausedWorkReservesNoSlot(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	e.Claimed("p", "p-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
	e.Due("b", "b-1", testkit.ClaimBase.Add(-time.Hour))
	e.Due("b", "b-2", testkit.ClaimBase.Add(-time.Hour+time.Second))
	if _, err := e.Client.PauseTenant(testkit.Context(t), docket.Tenant("p"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatalf("PauseTenant(p): %v", err)
	}
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"b-1", "b-2"})
	if got := dispositions(tr); !slices.Equal(got, []policy.Disposition{policy.DispositionPaused, policy.DispositionGrant}) {
		t.Fatalf("dispositions = %v, want paused then grant", got)
	}
}
