package claim

import (
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Ring, cursor, class, budget and epoch mechanics of docket_tenant_fair_claim,
// observed through the trusted trace.

// TestTenantFairRingCursorThroughEveryDisposition visits seven partitions, one
// per kind of inspection, with a demand that cannot be filled: the call makes
// exactly S inspections, wraps repeatedly over the seven positions, moves the
// cursor through every one of them and bumps only the granting epoch. f and
// g both miss the lock of their FIFO head, g with a due row behind it that
// the held head blocks.
func TestTenantFairRingCursorThroughEveryDisposition(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 100)
	early := testkit.ClaimBase.Add(-time.Hour)
	// One run per tenant first, so the ring positions are 1..7 in this order.
	e.Due("a", "a-1", early)
	e.Due("b", "b-1", early)
	e.Claimed("c", "c-held", testkit.ClaimBase.Add(-time.Minute), true)
	e.Due("d", "d-later", testkit.ClaimBase.Add(time.Hour))
	e.Waiting("e", "e-parked")
	e.Due("f", "f-1", early)
	e.Due("g", "g-1", early)
	e.Due("a", "a-2", early.Add(time.Second))
	e.Due("a", "a-3", early.Add(2*time.Second))
	e.Due("c", "c-queued", early)
	e.Due("g", "g-2", early.Add(time.Second))
	e.SetOverride("c", 1)
	for i, tenant := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		if got := e.Position(tenant); got != int64(i+1) {
			t.Fatalf("ring position of %s = %d, want %d", tenant, got, i+1)
		}
	}
	releasePartition := e.HoldPartition("b")
	releaseRuns := e.HoldRun("f-1", "g-1")

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 100, docket.PreferNone))

	var wantPositions []int64
	var wantDispositions []policy.Disposition
	round := []policy.Disposition{policy.DispositionGrant, policy.DispositionPartitionLockSkip,
		policy.DispositionCapDebtDenial, policy.DispositionEmptyPage, policy.DispositionEmptyPage,
		policy.DispositionLockMiss, policy.DispositionLockMiss}
	for v := range policy.InspectionsPerCall {
		wantPositions = append(wantPositions, int64(v%7+1))
		d := round[v%7]
		if v >= 7 && v%7 == 0 {
			d = policy.DispositionEmptyPage // a's runs are all claimed after its grant
		}
		wantDispositions = append(wantDispositions, d)
	}
	if got := positions(tr); !slices.Equal(got, wantPositions) {
		t.Fatalf("positions = %v, want %v", got, wantPositions)
	}
	if got := dispositions(tr); !slices.Equal(got, wantDispositions) {
		t.Fatalf("dispositions = %v, want %v", got, wantDispositions)
	}
	expectContiguous(t, tr, 0)
	for _, in := range tr.Inspections {
		wantOutcomes, wantDelta := 0, 0
		if in.Disposition == policy.DispositionGrant {
			wantOutcomes, wantDelta = 3, 1
		}
		if in.Outcomes != wantOutcomes || in.EpochDelta != wantDelta || in.Demand != 100 {
			t.Fatalf("inspection %+v: want %d outcomes, epoch delta %d, demand 100", in, wantOutcomes, wantDelta)
		}
	}
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"a-1", "a-2", "a-3"})
	for i, o := range tr.Outcomes {
		if o.Visit != 1 || o.Ordinal != i+1 || o.Class != docket.ClassQueuedReady ||
			o.Disposition != string(policy.OutcomeQueuedPromotion) || o.Poisoned {
			t.Fatalf("outcome %d = %+v", i, o)
		}
	}
	if got := e.Cursor(); got != 4 {
		t.Fatalf("cursor = %d, want 4 (the 32nd visit)", got)
	}
	if got := e.Epochs(); got["a"] != 1 || got["b"]+got["c"]+got["d"]+got["e"]+got["f"]+got["g"] != 0 {
		t.Fatalf("epochs = %v, want only a at 1", got)
	}

	// The next call starts strictly after the durable cursor and stops as
	// soon as its demand is filled.
	releasePartition()
	releaseRuns()
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if got := positions(tr); !slices.Equal(got, []int64{5, 6}) {
		t.Fatalf("positions of the filled call = %v, want [5 6]", got)
	}
	if got := dispositions(tr); !slices.Equal(got, []policy.Disposition{policy.DispositionEmptyPage, policy.DispositionGrant}) {
		t.Fatalf("dispositions of the filled call = %v", got)
	}
	expectContiguous(t, tr, 4)
	testkit.ClaimExpectIDs(t, "outcomes of the filled call", testkit.ClaimOutcomeIDs(tr), []string{"f-1"})
	if got := e.Cursor(); got != 6 {
		t.Fatalf("cursor = %d, want 6", got)
	}
}

// TestTenantFairRingEmptyRingLeavesCursor: with no unfinished partition there
// is no inspection and the cursor does not move.
func TestTenantFairRingEmptyRingLeavesCursor(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 5)
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	if len(tr.Inspections) != 0 || len(tr.Outcomes) != 0 || e.Cursor() != 0 {
		t.Fatalf("fresh domain: %d inspections, %d outcomes, cursor %d; want none and 0",
			len(tr.Inspections), len(tr.Outcomes), e.Cursor())
	}

	e.Due("x", "x-1", testkit.ClaimBase)
	e.Due("y", "y-1", testkit.ClaimBase)
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"x-1"})
	e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if got := e.Cursor(); got != 2 {
		t.Fatalf("cursor = %d, want 2", got)
	}
	e.Finish("x-1", "y-1")
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	if len(tr.Inspections) != 0 || e.Cursor() != 2 {
		t.Fatalf("empty ring: %d inspections, cursor %d; want none and 2", len(tr.Inspections), e.Cursor())
	}
}

// TestTenantFairRingFilledCallStopsAtOnce: a call ends with the visit that
// fills its demand; unentered visits do not move the cursor; the next call
// wraps past the largest position.
func TestTenantFairRingFilledCallStopsAtOnce(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	e.DueMany("p", "p", 2, testkit.ClaimBase.Add(-time.Hour))
	e.DueMany("q", "q", 2, testkit.ClaimBase.Add(-time.Hour))
	e.DueMany("r", "r", 2, testkit.ClaimBase.Add(-time.Hour))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	if got := positions(tr); !slices.Equal(got, []int64{1}) || e.Cursor() != 1 {
		t.Fatalf("positions %v, cursor %d; want [1] and 1", got, e.Cursor())
	}
	testkit.ClaimExpectIDs(t, "first call", testkit.ClaimOutcomeIDs(tr), []string{"p-1", "p-2"})

	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 3, docket.PreferNone))
	if got := positions(tr); !slices.Equal(got, []int64{2, 3}) || e.Cursor() != 3 {
		t.Fatalf("positions %v, cursor %d; want [2 3] and 3", got, e.Cursor())
	}
	expectContiguous(t, tr, 1)
	testkit.ClaimExpectIDs(t, "second call", testkit.ClaimOutcomeIDs(tr), []string{"q-1", "q-2", "r-1"})

	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	expectContiguous(t, tr, 3)
	if got := positions(tr); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("wrapped positions = %v, want [1 2 3]", got)
	}
	if got := dispositions(tr); !slices.Equal(got, []policy.Disposition{
		policy.DispositionEmptyPage, policy.DispositionEmptyPage, policy.DispositionGrant}) {
		t.Fatalf("wrapped dispositions = %v", got)
	}
	testkit.ClaimExpectIDs(t, "third call", testkit.ClaimOutcomeIDs(tr), []string{"r-2"})
}

// TestTenantFairRingSinglePositionRepeatsUntilS: a one-position ring is
// revisited S times; each grant commits at most Q outcomes and one epoch.
func TestTenantFairRingSinglePositionRepeatsUntilS(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 100)
	ids := e.DueMany("solo", "s", 10, testkit.ClaimBase.Add(-time.Hour))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 100, docket.PreferNone))
	if got := positions(tr); !slices.Equal(got, repeat(int64(1), policy.InspectionsPerCall)) {
		t.Fatalf("positions = %v, want 32 visits of position 1", got)
	}
	want := append([]policy.Disposition{policy.DispositionGrant, policy.DispositionGrant},
		repeat(policy.DispositionEmptyPage, policy.InspectionsPerCall-2)...)
	if got := dispositions(tr); !slices.Equal(got, want) {
		t.Fatalf("dispositions = %v", got)
	}
	if tr.Inspections[0].Outcomes != policy.OutcomesPerGrant || tr.Inspections[1].Outcomes != 2 {
		t.Fatalf("grant sizes %d and %d, want 8 and 2", tr.Inspections[0].Outcomes, tr.Inspections[1].Outcomes)
	}
	expectContiguous(t, tr, 0)
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), ids)
	for i, o := range tr.Outcomes {
		wantVisit := 1
		if i >= policy.OutcomesPerGrant {
			wantVisit = 2
		}
		if o.Ordinal != i+1 || o.Visit != wantVisit {
			t.Fatalf("outcome %d: visit %d ordinal %d, want visit %d ordinal %d", i, o.Visit, o.Ordinal, wantVisit, i+1)
		}
	}
	if got := e.Epochs()["solo"]; got != 2 {
		t.Fatalf("epoch = %d, want 2 (one per grant)", got)
	}
}

// TestTenantFairRingFrozenSetIsNotSubstituted: when the K oldest candidates
// are locked elsewhere, row K+1 is never locked in their place.
func TestTenantFairRingFrozenSetIsNotSubstituted(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 100)
	ids := e.DueMany("k", "k", policy.FrozenPerVisit+1, testkit.ClaimBase.Add(-time.Hour))
	e.MarkAdmitted(ids...)
	release := e.HoldRun(ids[:policy.FrozenPerVisit]...)

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if got := dispositions(tr); !slices.Equal(got, repeat(policy.DispositionLockMiss, policy.InspectionsPerCall)) {
		t.Fatalf("dispositions = %v, want 32 lock misses", got)
	}
	if len(tr.Outcomes) != 0 || e.State(ids[policy.FrozenPerVisit]).Claimed || e.Epochs()["k"] != 0 {
		t.Fatalf("row K+1 was taken: outcomes %v", testkit.ClaimOutcomeIDs(tr))
	}

	release()
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "after the locks end", testkit.ClaimOutcomeIDs(tr), ids[:1])
	if tr.Outcomes[0].Class != docket.ClassAdmittedReady || tr.Outcomes[0].Disposition != string(policy.OutcomeAdmittedReacquisition) {
		t.Fatalf("outcome = %+v, want an admitted reacquisition", tr.Outcomes[0])
	}
}

// TestTenantFairClassDemandOnePreference: demand one serves the preferred
// class and falls back to the other; without a preference the older
// eligible time wins.
func TestTenantFairClassDemandOnePreference(t *testing.T) {
	setup := func(t *testing.T) *testkit.ClaimEnv {
		e := testkit.NewClaimTenantFair(t, 10)
		e.Due("x", "x-ready", testkit.ClaimBase.Add(-30*time.Minute))
		e.MarkAdmitted("x-ready")
		e.Claimed("x", "x-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
		return e
	}
	cases := []struct {
		name string
		pref docket.Preference
		want []string
	}{
		{"prefer ready", docket.PreferReady, []string{"x-ready", "x-expired"}},
		{"prefer expired", docket.PreferExpired, []string{"x-expired", "x-ready"}},
		{"no preference", docket.PreferNone, []string{"x-expired", "x-ready"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			var got []string
			for range 2 {
				tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, tc.pref))
				got = append(got, testkit.ClaimOutcomeIDs(tr)...)
			}
			testkit.ClaimExpectIDs(t, "outcomes", got, tc.want)
			if e.Epochs()["x"] != 2 {
				t.Fatalf("epoch = %d, want 2", e.Epochs()["x"])
			}
		})
	}
}

// TestTenantFairClassReservationAcrossPartitions: demand >= 2 keeps the last
// outcome for the nonempty class that is still unserved, across partitions.
func TestTenantFairClassReservationAcrossPartitions(t *testing.T) {
	t.Run("reserved outcome served by the next partition", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 10)
		e.DueMany("a", "a", 3, testkit.ClaimBase.Add(-time.Hour))
		e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
		testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"a-1", "b-expired"})
		if got := dispositions(tr); !slices.Equal(got, []policy.Disposition{policy.DispositionGrant, policy.DispositionGrant}) {
			t.Fatalf("dispositions = %v", got)
		}
		if tr.Inspections[0].Outcomes != 1 || tr.Outcomes[1].Class != docket.ClassExpired {
			t.Fatalf("the first grant took %d outcomes; outcome 2 is %+v", tr.Inspections[0].Outcomes, tr.Outcomes[1])
		}
	})
	t.Run("without expired work the first partition fills the demand", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 10)
		e.DueMany("a", "a", 3, testkit.ClaimBase.Add(-time.Hour))
		e.Claimed("b", "b-live", testkit.ClaimBase.Add(-time.Minute), true)
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
		testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"a-1", "a-2"})
	})
	t.Run("both classes in one grant", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 10)
		e.DueMany("x", "x", 3, testkit.ClaimBase.Add(-time.Hour))
		e.Claimed("x", "x-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 3, docket.PreferNone))
		testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"x-expired", "x-1", "x-2"})
	})
	t.Run("last slot withheld while the other class is unreachable", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 10)
		e.DueMany("a", "a", 3, testkit.ClaimBase.Add(-time.Hour))
		e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
		e.HoldPartition("b")
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
		testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"a-1"})
		want := []policy.Disposition{policy.DispositionGrant, policy.DispositionPartitionLockSkip}
		for len(want) < policy.InspectionsPerCall {
			want = append(want, policy.DispositionDenied, policy.DispositionPartitionLockSkip)
		}
		if got := dispositions(tr); !slices.Equal(got, want) {
			t.Fatalf("dispositions = %v, want %v", got, want)
		}
	})
}
