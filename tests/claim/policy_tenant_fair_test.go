package claim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Cap identities, FIFO promotion, debt, steal, poison, engine interlock,
// transaction modes, rollback and the Legacy separation trace of TenantFair.

// classes lists the work classes of a trace's outcomes.
func classes(tr docket.ClaimTrace) []docket.WorkClass {
	out := make([]docket.WorkClass, len(tr.Outcomes))
	for i, o := range tr.Outcomes {
		out[i] = o.Class
	}
	return out
}

func TestTenantFairCapTwo(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	e.DueMany("t", "t", 5, testkit.ClaimBase.Add(-time.Hour))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "promotions", testkit.ClaimOutcomeIDs(tr), []string{"t-1", "t-2"})
	wantDisp := append([]policy.Disposition{policy.DispositionGrant},
		repeat(policy.DispositionCapDebtDenial, policy.InspectionsPerCall-1)...)
	if got := dispositions(tr); !slices.Equal(got, wantDisp) {
		t.Fatalf("dispositions = %v", got)
	}
	if e.Admitted("t") != 2 || e.LiveClaims("t") != 2 {
		t.Fatalf("admitted %d, live %d; want 2 and 2", e.Admitted("t"), e.LiveClaims("t"))
	}

	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	if len(tr.Outcomes) != 0 || !slices.Equal(dispositions(tr), repeat(policy.DispositionCapDebtDenial, policy.InspectionsPerCall)) {
		t.Fatalf("at the cap: outcomes %v, dispositions %v", testkit.ClaimOutcomeIDs(tr), dispositions(tr))
	}

	// A released admission is reacquired at the cap without a promotion.
	e.Release("t-1", testkit.ClaimBase)
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "reacquisition", testkit.ClaimOutcomeIDs(tr), []string{"t-1"})
	if tr.Outcomes[0].Class != docket.ClassAdmittedReady || tr.Result.Leases[0].Attempt != 2 {
		t.Fatalf("reacquisition = %+v, lease %+v", tr.Outcomes[0], tr.Result.Leases[0])
	}
	e.ExpectCapIdentity("t", 2)

	// Expired claims are stolen at the cap; still no promotion.
	later := testkit.ClaimBase.Add(2 * time.Hour)
	tr = e.Trace(testkit.ClaimReq(later, 1, docket.PreferExpired))
	testkit.ClaimExpectIDs(t, "steal", testkit.ClaimOutcomeIDs(tr), []string{"t-1"})
	if tr.Outcomes[0].Class != docket.ClassExpired || !tr.Result.Leases[0].EligibleAt.Equal(testkit.ClaimBase) {
		t.Fatalf("steal = %+v, lease %+v", tr.Outcomes[0], tr.Result.Leases[0])
	}
	e.ExpectCapIdentity("t", 2)
	if s := e.State("t-3"); s.Claimed || s.Marked {
		t.Fatalf("t-3 = %+v, want still queued", s)
	}

	// Finishing an admission frees its slot for the FIFO head.
	e.Finish("t-2")
	tr = e.Trace(testkit.ClaimReq(later, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "after a slot frees", testkit.ClaimOutcomeIDs(tr), []string{"t-3"})
	e.ExpectCapIdentity("t", 2)
	if e.Admitted("t") != 2 {
		t.Fatalf("admitted = %d, want 2", e.Admitted("t"))
	}
}

func TestTenantFairCapTen(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("t", "t", 25, testkit.ClaimBase.Add(-time.Hour))
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 25, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "promotions", testkit.ClaimOutcomeIDs(tr), ids[:10])
	want := append([]policy.Disposition{policy.DispositionGrant, policy.DispositionGrant},
		repeat(policy.DispositionCapDebtDenial, policy.InspectionsPerCall-2)...)
	if got := dispositions(tr); !slices.Equal(got, want) {
		t.Fatalf("dispositions = %v", got)
	}
	if tr.Inspections[0].Outcomes != 8 || tr.Inspections[1].Outcomes != 2 {
		t.Fatalf("grant sizes %d, %d; want 8, 2", tr.Inspections[0].Outcomes, tr.Inspections[1].Outcomes)
	}
	if e.Admitted("t") != 10 || e.LiveClaims("t") != 10 || e.Epochs()["t"] != 2 {
		t.Fatalf("admitted %d, live %d, epoch %d; want 10, 10, 2", e.Admitted("t"), e.LiveClaims("t"), e.Epochs()["t"])
	}

	// Reacquisition and steal at the cap. The released row's wake_at and the
	// claims' claimed_at are all testkit.ClaimBase, so the ids decide the order.
	e.Release(ids[0], testkit.ClaimBase)
	later := testkit.ClaimBase.Add(2 * time.Hour)
	tr = e.Trace(testkit.ClaimReq(later, 3, docket.PreferNone))
	if got := classes(tr); !slices.Equal(got, []docket.WorkClass{docket.ClassAdmittedReady, docket.ClassExpired, docket.ClassExpired}) {
		t.Fatalf("classes at the cap = %v (outcomes %v)", got, testkit.ClaimOutcomeIDs(tr))
	}
	testkit.ClaimExpectIDs(t, "work at the cap", testkit.ClaimOutcomeIDs(tr), ids[:3])
	e.ExpectCapIdentity("t", 10)
}

// TestTenantFairCapDebt: lowering the cap below the admitted count keeps the
// admissions (still reacquirable) and blocks promotion until the count falls
// below the new cap.
func TestTenantFairCapDebt(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("t", "t", 12, testkit.ClaimBase.Add(-time.Hour))
	e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	e.SetOverride("t", 3)

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 5, docket.PreferNone))
	if len(tr.Outcomes) != 0 || tr.Inspections[0].Disposition != policy.DispositionCapDebtDenial {
		t.Fatalf("in debt: outcomes %v, first disposition %s", testkit.ClaimOutcomeIDs(tr), tr.Inspections[0].Disposition)
	}
	e.Release(ids[0], testkit.ClaimBase)
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 5, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "reacquisition in debt", testkit.ClaimOutcomeIDs(tr), ids[:1])
	if e.Admitted("t") != 10 {
		t.Fatalf("admitted = %d, want 10 (debt is never trimmed)", e.Admitted("t"))
	}

	e.Finish(ids[1:8]...)
	if e.Admitted("t") != 3 {
		t.Fatalf("admitted = %d, want 3", e.Admitted("t"))
	}
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 5, docket.PreferNone))
	if len(tr.Outcomes) != 0 {
		t.Fatalf("at the lowered cap: outcomes %v, want none", testkit.ClaimOutcomeIDs(tr))
	}
	e.Finish(ids[8])
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 5, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "promotion below the lowered cap", testkit.ClaimOutcomeIDs(tr), ids[10:11])
	e.ExpectCapIdentity("t", 3)
}

// TestTenantFairCapRaisePromotesFIFO: promotion follows (wake_at, id), and a
// raised cap promotes the next rows in that order.
func TestTenantFairCapRaisePromotesFIFO(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	e.Due("t", "r-a", testkit.ClaimBase.Add(-10*time.Second))
	e.Due("t", "r-b", testkit.ClaimBase.Add(-50*time.Second))
	e.Due("t", "r-c", testkit.ClaimBase.Add(-30*time.Second))
	e.Due("t", "r-d", testkit.ClaimBase.Add(-30*time.Second))
	e.Due("t", "r-e", testkit.ClaimBase.Add(-40*time.Second))
	e.Due("t", "r-f", testkit.ClaimBase.Add(-20*time.Second))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "cap 2", testkit.ClaimOutcomeIDs(tr), []string{"r-b", "r-e"})
	e.SetOverride("t", 5)
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "cap raised to 5", testkit.ClaimOutcomeIDs(tr), []string{"r-c", "r-d", "r-f"})
	for _, l := range tr.Result.Leases {
		if l.Class != docket.ClassQueuedReady || e.State(l.RunID) != (testkit.ClaimRunState{Claimed: true, Marked: true, Attempts: 1}) {
			t.Fatalf("lease %+v, state %+v", l, e.State(l.RunID))
		}
	}
	e.ExpectCapIdentity("t", 5)
}

// TestTenantFairFIFOHeadLockedBlocksPromotion: a head locked by another
// connection underfills the visit; nothing behind it is promoted, while
// admitted work of the same partition is still served. Every later visit
// finds only the held head as a lead row: lock_miss.
func TestTenantFairFIFOHeadLockedBlocksPromotion(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("t", "q", 4, testkit.ClaimBase.Add(-time.Hour))
	e.Due("t", "q-admitted", testkit.ClaimBase.Add(-time.Minute))
	e.MarkAdmitted("q-admitted")
	release := e.HoldRun(ids[0])

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"q-admitted"})
	want := append([]policy.Disposition{policy.DispositionGrant},
		repeat(policy.DispositionLockMiss, policy.InspectionsPerCall-1)...)
	if got := dispositions(tr); !slices.Equal(got, want) {
		t.Fatalf("dispositions = %v", got)
	}
	for _, id := range ids {
		if s := e.State(id); s.Claimed || s.Marked {
			t.Fatalf("%s = %+v, want still queued behind the locked head", id, s)
		}
	}

	release()
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 4, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "after the head is free", testkit.ClaimOutcomeIDs(tr), ids)
}

// poisonReq is a claim request whose attempt limit is maxAttempts.
func poisonReq(limit, maxAttempts int) docket.ClaimRequest {
	req := testkit.ClaimReq(testkit.ClaimBase, limit, docket.PreferNone)
	req.MaxClaimAttempts = maxAttempts
	return req
}

// TestTenantFairPoisonAdmittedReleasesMarker: an admitted poison clears its
// marker, consumes demand without a token, and frees its slot in the same
// grant.
func TestTenantFairPoisonAdmittedReleasesMarker(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 1)
	e.Due("t", "p-admitted", testkit.ClaimBase.Add(-time.Hour))
	e.MarkAdmitted("p-admitted")
	e.SetAttempts("p-admitted", 3)
	e.Due("t", "p-queued", testkit.ClaimBase.Add(-time.Minute))

	tr := e.Trace(poisonReq(2, 3))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"p-admitted", "p-queued"})
	if len(tr.Inspections) != 1 || tr.Inspections[0].Outcomes != 2 || e.Epochs()["t"] != 1 {
		t.Fatalf("inspections %+v, epoch %d; want one grant of 2", tr.Inspections, e.Epochs()["t"])
	}
	p := tr.Result.Poisoned
	if len(p) != 1 || p[0].RunID != "p-admitted" || p[0].Attempts != 3 || p[0].Reason != "max_claim_attempts_exceeded" ||
		p[0].Class != docket.ClassAdmittedReady || !p[0].PoisonedAt.Equal(testkit.ClaimBase) {
		t.Fatalf("poisoned = %+v", p)
	}
	if !tr.Outcomes[0].Poisoned || tr.Outcomes[0].Disposition != string(policy.OutcomeAdmittedReacquisition) {
		t.Fatalf("poison outcome = %+v", tr.Outcomes[0])
	}
	if s := e.State("p-admitted"); s != (testkit.ClaimRunState{Poisoned: true, Attempts: 3}) {
		t.Fatalf("poisoned run = %+v, want poisoned without claim or marker", s)
	}
	if l := tr.Result.Leases; len(l) != 1 || l[0].RunID != "p-queued" || l[0].Class != docket.ClassQueuedReady {
		t.Fatalf("leases = %+v", l)
	}
	e.ExpectCapIdentity("t", 1)
}

// TestTenantFairPoisonQueuedOnlyAsHeadWithSlot: a queued poison candidate is
// poisoned only as the authoritative FIFO head with a free slot, and does not
// take the slot.
func TestTenantFairPoisonQueuedOnlyAsHeadWithSlot(t *testing.T) {
	t.Run("needs a free slot", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 1)
		e.Claimed("t", "x-held", testkit.ClaimBase.Add(-time.Minute), true)
		e.Due("t", "q-1", testkit.ClaimBase.Add(-time.Hour))
		e.SetAttempts("q-1", 3)
		e.Due("t", "q-2", testkit.ClaimBase.Add(-30*time.Minute))

		tr := e.Trace(poisonReq(2, 3))
		if len(tr.Outcomes) != 0 || tr.Inspections[0].Disposition != policy.DispositionCapDebtDenial || e.State("q-1").Poisoned {
			t.Fatalf("without a slot: outcomes %v, disposition %s, q-1 %+v", testkit.ClaimOutcomeIDs(tr), tr.Inspections[0].Disposition, e.State("q-1"))
		}
		e.Finish("x-held")
		tr = e.Trace(poisonReq(2, 3))
		testkit.ClaimExpectIDs(t, "with a slot", testkit.ClaimOutcomeIDs(tr), []string{"q-1", "q-2"})
		if !tr.Outcomes[0].Poisoned || tr.Outcomes[0].Disposition != string(policy.OutcomeQueuedPromotion) || tr.Outcomes[1].Poisoned {
			t.Fatalf("outcomes = %+v", tr.Outcomes)
		}
		if e.State("q-1") != (testkit.ClaimRunState{Poisoned: true, Attempts: 3}) || e.Admitted("t") != 1 {
			t.Fatalf("q-1 = %+v, admitted %d", e.State("q-1"), e.Admitted("t"))
		}
	})
	t.Run("only as the head", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 5)
		e.DueMany("t", "q", 2, testkit.ClaimBase.Add(-time.Hour))
		e.SetAttempts("q-2", 3)
		release := e.HoldRun("q-1")
		tr := e.Trace(poisonReq(1, 3))
		if len(tr.Outcomes) != 0 || e.State("q-2").Poisoned {
			t.Fatalf("behind a locked head: outcomes %v, q-2 %+v", testkit.ClaimOutcomeIDs(tr), e.State("q-2"))
		}
		release()
		tr = e.Trace(poisonReq(1, 3))
		testkit.ClaimExpectIDs(t, "head first", testkit.ClaimOutcomeIDs(tr), []string{"q-1"})
		if e.State("q-2").Poisoned {
			t.Fatal("q-2 was poisoned before it became the head")
		}
		tr = e.Trace(poisonReq(1, 3))
		if testkit.ClaimExpectIDs(t, "then the new head", testkit.ClaimOutcomeIDs(tr), []string{"q-2"}); !tr.Outcomes[0].Poisoned {
			t.Fatalf("q-2 outcome = %+v, want poison", tr.Outcomes[0])
		}
	})
}

// TestTenantFairEngineInterlock: TenantFair refuses an uninitialized or
// inactive policy and an impossible policy shape; Legacy refuses tenant_fair
// mode. Nothing changes on a refusal.
func TestTenantFairEngineInterlock(t *testing.T) {
	t.Run("not initialized", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 2)
		e.Due("t", "t-1", testkit.ClaimBase)
		testkit.ExecSQL(t, e.Pool, `update docket_claim_policy set admission_mode = 'legacy', max_active = null,
			configured_max_active = null, policy_version = 0, initialized_at = null`)
		before := e.Snapshot()
		_, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		testkit.ClaimExpectUnavailable(t, err, "not_initialized")
		if !errors.Is(err, docket.ErrNotInitialized) || e.Snapshot() != before {
			t.Fatalf("err %v; state changed: %v", err, e.Snapshot() != before)
		}
	})
	t.Run("inactive engines", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 2)
		e.Due("t", "t-1", testkit.ClaimBase)
		legacy := testkit.OpenClient(t, e.Pool, testkit.LegacyConfig())
		before := e.Snapshot()
		_, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		testkit.ClaimExpectUnavailable(t, err, "inactive_engine")
		if !errors.Is(err, docket.ErrInactiveEngine) || e.Snapshot() != before {
			t.Fatalf("TenantFair in legacy mode: err %v", err)
		}
		if res, err := legacy.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)); err != nil || res.Outcomes() != 1 {
			t.Fatalf("Legacy in legacy mode: %+v, %v", res, err)
		}
		fair := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(2))
		before = e.Snapshot()
		_, err = legacy.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		testkit.ClaimExpectUnavailable(t, err, "inactive_engine")
		if e.Snapshot() != before {
			t.Fatal("a refused Legacy call changed state")
		}
		if _, err := fair.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)); err != nil {
			t.Fatalf("TenantFair after restart: %v", err)
		}
	})
	t.Run("malformed policy", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 2)
		testkit.ExecSQL(t, e.Pool, `alter table docket_claim_policy drop constraint docket_claim_policy_shape_check`)
		testkit.ExecSQL(t, e.Pool, `update docket_claim_policy set initialized_at = null`)
		_, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		testkit.ClaimExpectUnavailable(t, err, "malformed_policy")
	})
}

// txModes are the transaction modes both engines must refuse.
var txModes = []struct {
	name   string
	opts   pgx.TxOptions
	reason string
}{
	{"read only", pgx.TxOptions{AccessMode: pgx.ReadOnly}, "read_only_transaction"},
	{"repeatable read", pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, "unsupported_isolation"},
	{"serializable", pgx.TxOptions{IsoLevel: pgx.Serializable}, "unsupported_isolation"},
}

func TestTenantFairFailsClosedInUnsupportedTransactions(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	e.DueMany("t", "t", 3, testkit.ClaimBase.Add(-time.Hour))
	for _, m := range txModes {
		t.Run(m.name, func(t *testing.T) {
			e.T = t
			e.ExpectRefusedInTx(m.opts, m.reason)
		})
	}
}

// TestTenantFairPolicyCursorContention: a held policy row yields
// lock_contention with nothing changed, and the caller's lock_timeout is the
// same after the call whether it was lower, higher or unset.
func TestTenantFairPolicyCursorContention(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	e.DueMany("t", "t", 3, testkit.ClaimBase.Add(-time.Hour))
	release := e.HoldLock(`select 1 from docket_claim_policy where id = 1 for update`)
	before := e.Snapshot()

	_, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectUnavailable(t, err, "lock_contention")
	if e.Snapshot() != before {
		t.Fatal("a contended claim changed state")
	}
	// "0" waits forever unless the engine caps the wait itself.
	for _, callerTimeout := range []string{"40ms", "5s", "0"} {
		got, err := e.ClaimWithLockTimeout(callerTimeout)
		testkit.ClaimExpectUnavailable(t, err, "lock_contention")
		if got != callerTimeout {
			t.Fatalf("lock_timeout after the call = %q, want the caller's %q", got, callerTimeout)
		}
	}
	if e.Snapshot() != before {
		t.Fatal("contended claims changed state")
	}

	release()
	got, err := e.ClaimWithLockTimeout("5s")
	if err != nil || got != "5s" {
		t.Fatalf("uncontended claim: err %v, lock_timeout after %q; want nil and 5s", err, got)
	}
}

// TestTenantFairRollbackLeavesNothing: a claim inside a rolled-back caller
// transaction persists no cursor, epoch, marker or claim.
func TestTenantFairRollbackLeavesNothing(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 3)
	e.DueMany("a", "a", 3, testkit.ClaimBase.Add(-time.Hour))
	e.DueMany("b", "b", 3, testkit.ClaimBase.Add(-time.Hour))
	e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
	before := e.Snapshot()
	ctx := testkit.Context(t)
	tx, err := e.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Client.ClaimDueTx(ctx, tx, testkit.ClaimReq(testkit.ClaimBase, 6, docket.PreferNone))
	if err != nil || res.Outcomes() != 6 {
		t.Fatalf("claim in transaction: %d outcomes, %v; want 6", res.Outcomes(), err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if after := e.Snapshot(); after != before {
		t.Fatalf("rollback left changes:\n before %s\n after  %s", before, after)
	}
}

// TestTenantFairSeparationFromLegacy is the deterministic Legacy separation
// control (docs/claim-algorithm.md, "The bounds"): one hot partition with N
// older rows, then one target row; demand one, each outcome completed before
// the next call. Legacy bypasses the target exactly N times; TenantFair lets
// the hot partition have at most one grant (at most Q outcomes) before the
// target's grant, whatever N.
func TestTenantFairSeparationFromLegacy(t *testing.T) {
	for _, n := range []int{2, 5, 50} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			legacy := testkit.NewClaimLegacy(t)
			seedSeparation(legacy, n)
			if got := legacyBypass(legacy); got != n {
				t.Fatalf("Legacy bypass = %d, want exactly %d", got, n)
			}

			fair := testkit.NewClaimTenantFair(t, 100)
			seedSeparation(fair, n)
			grants, outcomes := tenantFairBypass(fair)
			if grants > 1 || outcomes > policy.OutcomesPerGrant {
				t.Fatalf("TenantFair: %d hot grants, %d hot outcomes before the target; want <= 1 and <= %d",
					grants, outcomes, policy.OutcomesPerGrant)
			}
			if grants != 1 || outcomes != 1 {
				t.Fatalf("TenantFair: %d hot grants and %d outcomes, want exactly 1 and 1 on this trace", grants, outcomes)
			}
		})
	}
}

// seedSeparation inserts n hot rows, then one newer target row.
func seedSeparation(e *testkit.ClaimEnv, n int) {
	e.DueMany("hot", "hot", n, testkit.ClaimBase.Add(-time.Hour))
	e.Due("target", "target-1", testkit.ClaimBase.Add(-time.Hour+time.Duration(n)*time.Second))
}

// legacyBypass counts the outcomes before the target's, completing each.
func legacyBypass(e *testkit.ClaimEnv) int {
	e.T.Helper()
	for bypass := 0; ; bypass++ {
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		if len(tr.Outcomes) != 1 {
			e.T.Fatalf("Legacy call %d: %d outcomes", bypass+1, len(tr.Outcomes))
		}
		if tr.Outcomes[0].RunID == "target-1" {
			return bypass
		}
		e.Finish(tr.Outcomes[0].RunID)
	}
}

// tenantFairBypass counts the hot grants and outcomes before the target's
// grant, completing each outcome before the next call.
func tenantFairBypass(e *testkit.ClaimEnv) (grants, outcomes int) {
	e.T.Helper()
	for call := 1; call <= 100; call++ {
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		for _, in := range tr.Inspections {
			if in.Disposition != policy.DispositionGrant {
				continue
			}
			if in.ScopeKey == "target" {
				return grants, outcomes
			}
			grants++
			outcomes += in.Outcomes
		}
		e.Finish(testkit.ClaimOutcomeIDs(tr)...)
	}
	e.T.Fatal("the target never got a grant")
	return 0, 0
}

// TestTenantFairConcurrentClaimersRespectCaps: 8 claimers drain 2,000 runs of
// 50 tenants with mixed caps. No run is leased twice, every run is leased,
// and after every call no tenant is above its cap or has more live claims
// than admissions.
func TestTenantFairConcurrentClaimersRespectCaps(t *testing.T) {
	const runs, tenants, claimers = 2000, 50, 8
	pool := testkit.ClaimPoolWithSize(t, claimers+2)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(3))
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('c-%s', g), format('t%s', lpad((g % $2)::text, 2, '0')), 'g', 'h1', 'running', '{}',
		       $3::timestamptz - make_interval(secs => $1 - g)
		  from generate_series(1, $1) g`, runs, tenants, testkit.ClaimBase)
	testkit.ExecSQL(t, pool, `update docket_claim_partitions
		   set max_active = case right(scope_key, 1)::int % 5 when 0 then 1 when 1 then 2 when 2 then 5 when 3 then 10 end`)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	results := make(chan claimerResult, claimers)
	progress := testkit.NewClaimProgress()
	for range claimers {
		go func() { results <- claimer(ctx, client, pool, runs, progress) }()
	}
	leased := map[string]int{}
	contended := 0
	for range claimers {
		r := <-results
		if r.err != nil {
			t.Fatalf("claimer: %v", r.err)
		}
		for _, id := range r.runIDs {
			leased[id]++
		}
		contended += r.contended
	}
	if len(leased) != runs {
		t.Fatalf("%d distinct runs leased, want %d", len(leased), runs)
	}
	for id, n := range leased {
		if n != 1 {
			t.Fatalf("run %s leased %d times", id, n)
		}
	}
	if done := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where status = 'done'`); done != runs {
		t.Fatalf("%d runs done, want %d", done, runs)
	}
	t.Logf("%d lock_contention refusals retried", contended)
}

// claimerResult is what one concurrent claimer saw.
type claimerResult struct {
	runIDs    []string
	contended int
	err       error
}

// capViolations counts tenants above their cap or with more live claims
// than admissions.
const capViolations = `
select count(*)
  from (select r.scope_key,
               count(*) filter (where r.tenant_admitted_at is not null) as admitted,
               count(*) filter (where r.claim_token is not null) as live
          from docket_runs r
         where r.status = 'running' and r.poisoned_at is null
         group by r.scope_key) s
  join docket_claim_partitions p on p.scope_key = s.scope_key
 cross join docket_claim_policy pol
 where s.admitted > coalesce(p.max_active, pol.max_active) or s.live > s.admitted`

// claimer claims and completes runs until all runs are done. A call that
// leases nothing waits for another claimer's commit, which alone can free
// work at the claimers' fixed clock.
func claimer(ctx context.Context, client *docket.Client, pool *pgxpool.Pool, runs int, progress *testkit.ClaimProgress) claimerResult {
	var r claimerResult
	for {
		committed := progress.Next()
		var done int
		if err := pool.QueryRow(ctx, `select count(*) from docket_runs where status = 'done'`).Scan(&done); err != nil {
			r.err = err
			return r
		}
		if done == runs {
			return r
		}
		res, err := client.ClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, 5, docket.PreferNone))
		if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok && unavailable.Reason == "lock_contention" {
			r.contended++
			continue
		}
		if err != nil {
			r.err = err
			return r
		}
		var violations int
		if err := pool.QueryRow(ctx, capViolations).Scan(&violations); err != nil || violations != 0 {
			r.err = fmt.Errorf("cap invariant: %d violating tenants (%v)", violations, err)
			return r
		}
		if len(res.Poisoned) != 0 {
			r.err = fmt.Errorf("unexpected poison %+v", res.Poisoned)
			return r
		}
		for _, l := range res.Leases {
			r.runIDs = append(r.runIDs, l.RunID)
			if _, err := client.Commit(ctx, docket.CommitRequest{Holder: l.Holder(), ExpectedSeq: l.CheckpointSeq,
				Step: 1, Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
				r.err = fmt.Errorf("complete %s: %w", l.RunID, err)
				return r
			}
			progress.Mark()
		}
		if len(res.Leases) == 0 {
			if err := progress.Wait(ctx, committed); err != nil {
				r.err = err
				return r
			}
		}
	}
}
