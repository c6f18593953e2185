package tests

import (
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
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
	e := newClTenantFair(t, 100)
	early := clBase.Add(-time.Hour)
	// One run per tenant first, so the ring positions are 1..7 in this order.
	e.due("a", "a-1", early)
	e.due("b", "b-1", early)
	e.claimed("c", "c-held", clBase.Add(-time.Minute), true)
	e.due("d", "d-later", clBase.Add(time.Hour))
	e.waiting("e", "e-parked")
	e.due("f", "f-1", early)
	e.due("g", "g-1", early)
	e.due("a", "a-2", early.Add(time.Second))
	e.due("a", "a-3", early.Add(2*time.Second))
	e.due("c", "c-queued", early)
	e.due("g", "g-2", early.Add(time.Second))
	e.setOverride("c", 1)
	for i, tenant := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		if got := e.position(tenant); got != int64(i+1) {
			t.Fatalf("ring position of %s = %d, want %d", tenant, got, i+1)
		}
	}
	releasePartition := e.holdPartition("b")
	releaseRuns := e.holdRun("f-1", "g-1")

	tr := e.trace(clReq(clBase, 100, docket.PreferNone))

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
	if got := clPositions(tr); !slices.Equal(got, wantPositions) {
		t.Fatalf("positions = %v, want %v", got, wantPositions)
	}
	if got := clDispositions(tr); !slices.Equal(got, wantDispositions) {
		t.Fatalf("dispositions = %v, want %v", got, wantDispositions)
	}
	clExpectContiguous(t, tr, 0)
	for _, in := range tr.Inspections {
		wantOutcomes, wantDelta := 0, 0
		if in.Disposition == policy.DispositionGrant {
			wantOutcomes, wantDelta = 3, 1
		}
		if in.Outcomes != wantOutcomes || in.EpochDelta != wantDelta || in.Demand != 100 {
			t.Fatalf("inspection %+v: want %d outcomes, epoch delta %d, demand 100", in, wantOutcomes, wantDelta)
		}
	}
	clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"a-1", "a-2", "a-3"})
	for i, o := range tr.Outcomes {
		if o.Visit != 1 || o.Ordinal != i+1 || o.Class != docket.ClassQueuedReady ||
			o.Disposition != string(policy.OutcomeQueuedPromotion) || o.Poisoned {
			t.Fatalf("outcome %d = %+v", i, o)
		}
	}
	if got := e.cursor(); got != 4 {
		t.Fatalf("cursor = %d, want 4 (the 32nd visit)", got)
	}
	if got := e.epochs(); got["a"] != 1 || got["b"]+got["c"]+got["d"]+got["e"]+got["f"]+got["g"] != 0 {
		t.Fatalf("epochs = %v, want only a at 1", got)
	}

	// The next call starts strictly after the durable cursor and stops as
	// soon as its demand is filled.
	releasePartition()
	releaseRuns()
	tr = e.trace(clReq(clBase, 1, docket.PreferNone))
	if got := clPositions(tr); !slices.Equal(got, []int64{5, 6}) {
		t.Fatalf("positions of the filled call = %v, want [5 6]", got)
	}
	if got := clDispositions(tr); !slices.Equal(got, []policy.Disposition{policy.DispositionEmptyPage, policy.DispositionGrant}) {
		t.Fatalf("dispositions of the filled call = %v", got)
	}
	clExpectContiguous(t, tr, 4)
	clExpectIDs(t, "outcomes of the filled call", clOutcomeIDs(tr), []string{"f-1"})
	if got := e.cursor(); got != 6 {
		t.Fatalf("cursor = %d, want 6", got)
	}
}

// TestTenantFairRingEmptyRingLeavesCursor: with no unfinished partition there
// is no inspection and the cursor does not move.
func TestTenantFairRingEmptyRingLeavesCursor(t *testing.T) {
	e := newClTenantFair(t, 5)
	tr := e.trace(clReq(clBase, 10, docket.PreferNone))
	if len(tr.Inspections) != 0 || len(tr.Outcomes) != 0 || e.cursor() != 0 {
		t.Fatalf("fresh domain: %d inspections, %d outcomes, cursor %d; want none and 0",
			len(tr.Inspections), len(tr.Outcomes), e.cursor())
	}

	e.due("x", "x-1", clBase)
	e.due("y", "y-1", clBase)
	tr = e.trace(clReq(clBase, 1, docket.PreferNone))
	clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"x-1"})
	e.trace(clReq(clBase, 1, docket.PreferNone))
	if got := e.cursor(); got != 2 {
		t.Fatalf("cursor = %d, want 2", got)
	}
	e.finish("x-1", "y-1")
	tr = e.trace(clReq(clBase, 10, docket.PreferNone))
	if len(tr.Inspections) != 0 || e.cursor() != 2 {
		t.Fatalf("empty ring: %d inspections, cursor %d; want none and 2", len(tr.Inspections), e.cursor())
	}
}

// TestTenantFairRingFilledCallStopsAtOnce: a call ends with the visit that
// fills its demand; unentered visits do not move the cursor; the next call
// wraps past the largest position.
func TestTenantFairRingFilledCallStopsAtOnce(t *testing.T) {
	e := newClTenantFair(t, 10)
	e.dueMany("p", "p", 2, clBase.Add(-time.Hour))
	e.dueMany("q", "q", 2, clBase.Add(-time.Hour))
	e.dueMany("r", "r", 2, clBase.Add(-time.Hour))

	tr := e.trace(clReq(clBase, 2, docket.PreferNone))
	if got := clPositions(tr); !slices.Equal(got, []int64{1}) || e.cursor() != 1 {
		t.Fatalf("positions %v, cursor %d; want [1] and 1", got, e.cursor())
	}
	clExpectIDs(t, "first call", clOutcomeIDs(tr), []string{"p-1", "p-2"})

	tr = e.trace(clReq(clBase, 3, docket.PreferNone))
	if got := clPositions(tr); !slices.Equal(got, []int64{2, 3}) || e.cursor() != 3 {
		t.Fatalf("positions %v, cursor %d; want [2 3] and 3", got, e.cursor())
	}
	clExpectContiguous(t, tr, 1)
	clExpectIDs(t, "second call", clOutcomeIDs(tr), []string{"q-1", "q-2", "r-1"})

	tr = e.trace(clReq(clBase, 1, docket.PreferNone))
	clExpectContiguous(t, tr, 3)
	if got := clPositions(tr); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("wrapped positions = %v, want [1 2 3]", got)
	}
	if got := clDispositions(tr); !slices.Equal(got, []policy.Disposition{
		policy.DispositionEmptyPage, policy.DispositionEmptyPage, policy.DispositionGrant}) {
		t.Fatalf("wrapped dispositions = %v", got)
	}
	clExpectIDs(t, "third call", clOutcomeIDs(tr), []string{"r-2"})
}

// TestTenantFairRingSinglePositionRepeatsUntilS: a one-position ring is
// revisited S times; each grant commits at most Q outcomes and one epoch.
func TestTenantFairRingSinglePositionRepeatsUntilS(t *testing.T) {
	e := newClTenantFair(t, 100)
	ids := e.dueMany("solo", "s", 10, clBase.Add(-time.Hour))

	tr := e.trace(clReq(clBase, 100, docket.PreferNone))
	if got := clPositions(tr); !slices.Equal(got, clRepeat(int64(1), policy.InspectionsPerCall)) {
		t.Fatalf("positions = %v, want 32 visits of position 1", got)
	}
	want := append([]policy.Disposition{policy.DispositionGrant, policy.DispositionGrant},
		clRepeat(policy.DispositionEmptyPage, policy.InspectionsPerCall-2)...)
	if got := clDispositions(tr); !slices.Equal(got, want) {
		t.Fatalf("dispositions = %v", got)
	}
	if tr.Inspections[0].Outcomes != policy.OutcomesPerGrant || tr.Inspections[1].Outcomes != 2 {
		t.Fatalf("grant sizes %d and %d, want 8 and 2", tr.Inspections[0].Outcomes, tr.Inspections[1].Outcomes)
	}
	clExpectContiguous(t, tr, 0)
	clExpectIDs(t, "outcomes", clOutcomeIDs(tr), ids)
	for i, o := range tr.Outcomes {
		wantVisit := 1
		if i >= policy.OutcomesPerGrant {
			wantVisit = 2
		}
		if o.Ordinal != i+1 || o.Visit != wantVisit {
			t.Fatalf("outcome %d: visit %d ordinal %d, want visit %d ordinal %d", i, o.Visit, o.Ordinal, wantVisit, i+1)
		}
	}
	if got := e.epochs()["solo"]; got != 2 {
		t.Fatalf("epoch = %d, want 2 (one per grant)", got)
	}
}

// TestTenantFairRingFrozenSetIsNotSubstituted: when the K oldest candidates
// are locked elsewhere, row K+1 is never locked in their place.
func TestTenantFairRingFrozenSetIsNotSubstituted(t *testing.T) {
	e := newClTenantFair(t, 100)
	ids := e.dueMany("k", "k", policy.FrozenPerVisit+1, clBase.Add(-time.Hour))
	e.markAdmitted(ids...)
	release := e.holdRun(ids[:policy.FrozenPerVisit]...)

	tr := e.trace(clReq(clBase, 1, docket.PreferNone))
	if got := clDispositions(tr); !slices.Equal(got, clRepeat(policy.DispositionLockMiss, policy.InspectionsPerCall)) {
		t.Fatalf("dispositions = %v, want 32 lock misses", got)
	}
	if len(tr.Outcomes) != 0 || e.state(ids[policy.FrozenPerVisit]).Claimed || e.epochs()["k"] != 0 {
		t.Fatalf("row K+1 was taken: outcomes %v", clOutcomeIDs(tr))
	}

	release()
	tr = e.trace(clReq(clBase, 1, docket.PreferNone))
	clExpectIDs(t, "after the locks end", clOutcomeIDs(tr), ids[:1])
	if tr.Outcomes[0].Class != docket.ClassAdmittedReady || tr.Outcomes[0].Disposition != string(policy.OutcomeAdmittedReacquisition) {
		t.Fatalf("outcome = %+v, want an admitted reacquisition", tr.Outcomes[0])
	}
}

// TestTenantFairClassDemandOnePreference: demand one serves the preferred
// class and falls back to the other; without a preference the older
// eligible time wins.
func TestTenantFairClassDemandOnePreference(t *testing.T) {
	setup := func(t *testing.T) *clEnv {
		e := newClTenantFair(t, 10)
		e.due("x", "x-ready", clBase.Add(-30*time.Minute))
		e.markAdmitted("x-ready")
		e.claimed("x", "x-expired", clBase.Add(-2*time.Hour), true)
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
				tr := e.trace(clReq(clBase, 1, tc.pref))
				got = append(got, clOutcomeIDs(tr)...)
			}
			clExpectIDs(t, "outcomes", got, tc.want)
			if e.epochs()["x"] != 2 {
				t.Fatalf("epoch = %d, want 2", e.epochs()["x"])
			}
		})
	}
}

// TestTenantFairClassReservationAcrossPartitions: demand >= 2 keeps the last
// outcome for the nonempty class that is still unserved, across partitions.
func TestTenantFairClassReservationAcrossPartitions(t *testing.T) {
	t.Run("reserved outcome served by the next partition", func(t *testing.T) {
		e := newClTenantFair(t, 10)
		e.dueMany("a", "a", 3, clBase.Add(-time.Hour))
		e.claimed("b", "b-expired", clBase.Add(-2*time.Hour), true)
		tr := e.trace(clReq(clBase, 2, docket.PreferNone))
		clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"a-1", "b-expired"})
		if got := clDispositions(tr); !slices.Equal(got, []policy.Disposition{policy.DispositionGrant, policy.DispositionGrant}) {
			t.Fatalf("dispositions = %v", got)
		}
		if tr.Inspections[0].Outcomes != 1 || tr.Outcomes[1].Class != docket.ClassExpired {
			t.Fatalf("the first grant took %d outcomes; outcome 2 is %+v", tr.Inspections[0].Outcomes, tr.Outcomes[1])
		}
	})
	t.Run("without expired work the first partition fills the demand", func(t *testing.T) {
		e := newClTenantFair(t, 10)
		e.dueMany("a", "a", 3, clBase.Add(-time.Hour))
		e.claimed("b", "b-live", clBase.Add(-time.Minute), true)
		tr := e.trace(clReq(clBase, 2, docket.PreferNone))
		clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"a-1", "a-2"})
	})
	t.Run("both classes in one grant", func(t *testing.T) {
		e := newClTenantFair(t, 10)
		e.dueMany("x", "x", 3, clBase.Add(-time.Hour))
		e.claimed("x", "x-expired", clBase.Add(-2*time.Hour), true)
		tr := e.trace(clReq(clBase, 3, docket.PreferNone))
		clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"x-expired", "x-1", "x-2"})
	})
	t.Run("last slot withheld while the other class is unreachable", func(t *testing.T) {
		e := newClTenantFair(t, 10)
		e.dueMany("a", "a", 3, clBase.Add(-time.Hour))
		e.claimed("b", "b-expired", clBase.Add(-2*time.Hour), true)
		e.holdPartition("b")
		tr := e.trace(clReq(clBase, 2, docket.PreferNone))
		clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"a-1"})
		want := []policy.Disposition{policy.DispositionGrant, policy.DispositionPartitionLockSkip}
		for len(want) < policy.InspectionsPerCall {
			want = append(want, policy.DispositionDenied, policy.DispositionPartitionLockSkip)
		}
		if got := clDispositions(tr); !slices.Equal(got, want) {
			t.Fatalf("dispositions = %v, want %v", got, want)
		}
	})
}
