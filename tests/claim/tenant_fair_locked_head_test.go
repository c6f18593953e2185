package claim

import (
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A TenantFair visit chooses its class heads among the rows it locked: a
// head another transaction holds hands its place to the next row of its
// class, while a held queued FIFO head still blocks every promotion behind
// it. Each test holds the row lock from another connection for the whole
// call (the claim never waits on a run row, so no test waits at all).

// visit is the expected shape of one inspection: partition, disposition
// and outcome count.
type visit struct {
	scope    string
	disp     policy.Disposition
	outcomes int
}

// expectVisits checks every inspection's partition, disposition, outcome
// count and epoch delta.
func expectVisits(t *testing.T, tr docket.ClaimTrace, want []visit) {
	t.Helper()
	var got []visit
	for _, in := range tr.Inspections {
		got = append(got, visit{in.ScopeKey, in.Disposition, in.Outcomes})
		wantDelta := 0
		if in.Disposition == policy.DispositionGrant {
			wantDelta = 1
		}
		if in.EpochDelta != wantDelta {
			t.Errorf("visit %d: epoch delta %d, want %d", in.Visit, in.EpochDelta, wantDelta)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("inspections = %v, want %v", got, want)
	}
}

// expectClasses checks the outcome classes in commit order.
func expectClasses(t *testing.T, tr docket.ClaimTrace, want []docket.WorkClass) {
	t.Helper()
	var got []docket.WorkClass
	for _, o := range tr.Outcomes {
		got = append(got, o.Class)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("outcome classes = %v, want %v", got, want)
	}
}

// expectUntouched checks that the runs kept their claim state.
func expectUntouched(t *testing.T, e *testkit.ClaimEnv, want map[string]testkit.ClaimRunState) {
	t.Helper()
	for id, w := range want {
		if got := e.State(id); got != w {
			t.Errorf("%s = %+v, want %+v", id, got, w)
		}
	}
}

// TestTenantFairLockedExpiredHeadPreferenceServesNextExpired: demand 1 with
// preference expired; the older of two expired claims is held elsewhere, so
// the newer one heads the expired class and is served instead of falling
// back to the ready row (fallback is only for a preferred class the visit
// can take nothing of).
func TestTenantFairLockedExpiredHeadPreferenceServesNextExpired(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	e.Due("a", "a-ready", testkit.ClaimBase.Add(-3*time.Hour))
	e.MarkAdmitted("a-ready")
	e.Claimed("a", "a-exp-old", testkit.ClaimBase.Add(-5*time.Hour), true)
	e.Claimed("a", "a-exp-new", testkit.ClaimBase.Add(-4*time.Hour), true)
	e.HoldRun("a-exp-old")

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferExpired))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"a-exp-new"})
	expectClasses(t, tr, []docket.WorkClass{docket.ClassExpired})
	expectVisits(t, tr, []visit{{"a", policy.DispositionGrant, 1}})
	if o := tr.Outcomes[0]; o.Disposition != string(policy.OutcomeExpiredRecovery) || o.Visit != 1 || o.Ordinal != 1 {
		t.Fatalf("outcome = %+v, want expired_recovery, visit 1, ordinal 1", o)
	}
	expectUntouched(t, e, map[string]testkit.ClaimRunState{
		"a-ready":   {Marked: true},
		"a-exp-old": {Claimed: true, Marked: true, Attempts: 1},
		"a-exp-new": {Claimed: true, Marked: true, Attempts: 2},
	})
}

// TestTenantFairLockedReadyHeadPreferenceServesNextReady: demand 1 with
// preference ready; the oldest admitted-ready row is held elsewhere, so the
// next one heads the ready class and is served, not the (older) expired
// claim.
func TestTenantFairLockedReadyHeadPreferenceServesNextReady(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "a-ready", 3, testkit.ClaimBase.Add(-3*time.Hour))
	e.MarkAdmitted(ids...)
	e.Claimed("a", "a-exp", testkit.ClaimBase.Add(-5*time.Hour), true)
	e.HoldRun(ids[0])

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferReady))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{ids[1]})
	expectClasses(t, tr, []docket.WorkClass{docket.ClassAdmittedReady})
	expectVisits(t, tr, []visit{{"a", policy.DispositionGrant, 1}})
	expectUntouched(t, e, map[string]testkit.ClaimRunState{
		ids[0]:  {Marked: true},
		ids[2]:  {Marked: true},
		"a-exp": {Claimed: true, Marked: true, Attempts: 1},
	})
}

// TestTenantFairLockedExpiredHeadServedInTheSameGrant: demand 9 over a
// partition with nine admitted-ready rows and two expired claims, the older
// held elsewhere and the newer due after every ready row, then a partition
// with one queued row. The newer expired claim heads the expired class, so
// a's one grant serves both classes (its ready head, the expired claim, six
// more ready rows) and b's visit promotes its row with the last slot: one
// grant each, and no visit is denied.
func TestTenantFairLockedExpiredHeadServedInTheSameGrant(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 20)
	ready := e.DueMany("a", "a-ready", 9, testkit.ClaimBase.Add(-4*time.Hour))
	e.MarkAdmitted(ready...)
	e.Claimed("a", "a-exp-old", testkit.ClaimBase.Add(-5*time.Hour), true)
	e.Claimed("a", "a-exp-new", testkit.ClaimBase.Add(-3*time.Hour), true)
	e.Due("b", "b-queued", testkit.ClaimBase.Add(-time.Hour))
	if e.Position("a") != 1 || e.Position("b") != 2 {
		t.Fatalf("ring positions a=%d b=%d, want 1 and 2", e.Position("a"), e.Position("b"))
	}
	e.HoldRun("a-exp-old")
	before := e.Epochs()

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 9, docket.PreferNone))
	want := append([]string{ready[0], "a-exp-new"}, ready[1:7]...)
	want = append(want, "b-queued")
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), want)
	expectClasses(t, tr, []docket.WorkClass{docket.ClassAdmittedReady, docket.ClassExpired,
		docket.ClassAdmittedReady, docket.ClassAdmittedReady, docket.ClassAdmittedReady,
		docket.ClassAdmittedReady, docket.ClassAdmittedReady, docket.ClassAdmittedReady,
		docket.ClassQueuedReady})
	expectVisits(t, tr, []visit{{"a", policy.DispositionGrant, 8}, {"b", policy.DispositionGrant, 1}})
	after := e.Epochs()
	if after["a"] != before["a"]+1 || after["b"] != before["b"]+1 {
		t.Fatalf("epochs %v -> %v, want a and b one grant each", before, after)
	}
	expectUntouched(t, e, map[string]testkit.ClaimRunState{
		ready[7]:    {Marked: true},
		ready[8]:    {Marked: true},
		"a-exp-old": {Claimed: true, Marked: true, Attempts: 1},
		"b-queued":  {Claimed: true, Marked: true, Attempts: 1},
	})
}

// TestTenantFairLockedExpiredHeadReservationCarriesAcrossGrants: demand 3;
// a's only expired claim is held elsewhere, so a's visit can serve only the
// ready class and keeps the last slot for the expired class, which b's
// expired claim then takes in the next grant.
func TestTenantFairLockedExpiredHeadReservationCarriesAcrossGrants(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ready := e.DueMany("a", "a-ready", 3, testkit.ClaimBase.Add(-3*time.Hour))
	e.MarkAdmitted(ready...)
	e.Claimed("a", "a-exp", testkit.ClaimBase.Add(-5*time.Hour), true)
	e.Claimed("b", "b-exp", testkit.ClaimBase.Add(-2*time.Hour), true)
	e.HoldRun("a-exp")

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 3, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{ready[0], ready[1], "b-exp"})
	expectClasses(t, tr, []docket.WorkClass{docket.ClassAdmittedReady, docket.ClassAdmittedReady, docket.ClassExpired})
	expectVisits(t, tr, []visit{{"a", policy.DispositionGrant, 2}, {"b", policy.DispositionGrant, 1}})
	expectUntouched(t, e, map[string]testkit.ClaimRunState{
		ready[2]: {Marked: true},
		"a-exp":  {Claimed: true, Marked: true, Attempts: 1},
	})
}

// TestTenantFairLockedQueuedHeadBlocksPromotion: a queued FIFO head held
// elsewhere is never bypassed, whatever the demand: nothing behind it is
// promoted, and every visit is lock_miss (its only lead row was held), with
// demand 1 (one frozen queued row) as with demand 4 (four).
func TestTenantFairLockedQueuedHeadBlocksPromotion(t *testing.T) {
	for _, demand := range []int{1, 4} {
		e := testkit.NewClaimTenantFair(t, 10)
		ids := e.DueMany("a", "a-q", 4, testkit.ClaimBase.Add(-time.Hour))
		release := e.HoldRun(ids[0])

		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, demand, docket.PreferReady))
		if len(tr.Outcomes) != 0 {
			t.Fatalf("demand %d: outcomes %v, want none", demand, testkit.ClaimOutcomeIDs(tr))
		}
		want := repeat(visit{"a", policy.DispositionLockMiss, 0}, policy.InspectionsPerCall)
		expectVisits(t, tr, want)
		for _, id := range ids {
			expectUntouched(t, e, map[string]testkit.ClaimRunState{id: {}})
		}

		release()
		tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, demand, docket.PreferReady))
		testkit.ClaimExpectIDs(t, "after the head is free", testkit.ClaimOutcomeIDs(tr), ids[:demand])
	}
}

// TestTenantFairDispositionCapDebtBeforeReservation: a visit whose frozen
// set has a queued row but no free slot is cap_debt_denial even when the
// last-slot rule reaches the row first. Demand 2: b's ready row takes the
// first slot, a (cap 1, its slot held by a live claim) cannot promote, and
// c's expired claim takes the slot kept for its class.
func TestTenantFairDispositionCapDebtBeforeReservation(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	e.Due("b", "b-ready", testkit.ClaimBase.Add(-2*time.Hour))
	e.MarkAdmitted("b-ready")
	e.Claimed("a", "a-live", testkit.ClaimBase.Add(-time.Minute), true)
	e.Claimed("c", "c-exp", testkit.ClaimBase.Add(-3*time.Hour), true)
	e.Due("a", "a-queued", testkit.ClaimBase.Add(-2*time.Hour))
	e.SetOverride("a", 1)

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"b-ready", "c-exp"})
	expectVisits(t, tr, []visit{{"b", policy.DispositionGrant, 1},
		{"a", policy.DispositionCapDebtDenial, 0}, {"c", policy.DispositionGrant, 1}})
	expectUntouched(t, e, map[string]testkit.ClaimRunState{"a-queued": {}})
}

// TestTenantFairDispositionDeniedByReservation: a visit whose lead rows are
// locked and fresh but withheld by the last-slot rule is denied, even when
// another lead row of it is held elsewhere. Demand 2: x's ready row takes
// the first slot, y's ready row is withheld for the expired class (y's
// other ready row is held), and z's expired claim takes the last slot.
func TestTenantFairDispositionDeniedByReservation(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	e.Due("x", "x-ready", testkit.ClaimBase.Add(-2*time.Hour))
	e.Due("y", "y-held", testkit.ClaimBase.Add(-2*time.Hour))
	e.Due("y", "y-ready", testkit.ClaimBase.Add(-time.Hour))
	e.Claimed("z", "z-exp", testkit.ClaimBase.Add(-3*time.Hour), true)
	e.MarkAdmitted("x-ready", "y-held", "y-ready")
	e.HoldRun("y-held")

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"x-ready", "z-exp"})
	expectVisits(t, tr, []visit{{"x", policy.DispositionGrant, 1},
		{"y", policy.DispositionDenied, 0}, {"z", policy.DispositionGrant, 1}})
	expectUntouched(t, e, map[string]testkit.ClaimRunState{"y-ready": {Marked: true}, "y-held": {Marked: true}})
}
