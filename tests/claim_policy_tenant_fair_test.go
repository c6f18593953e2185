package tests

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
)

// Cap identities, FIFO promotion, debt, steal, poison, engine interlock,
// transaction modes, rollback and the Legacy separation trace of TenantFair.

// expectCapIdentity checks live claims <= admitted <= cap for tenant.
func (e *clEnv) expectCapIdentity(tenant string, capValue int64) {
	e.t.Helper()
	live, admitted := e.liveClaims(tenant), e.admitted(tenant)
	if live > admitted || admitted > capValue {
		e.t.Fatalf("%s: live %d, admitted %d, cap %d: want live <= admitted <= cap", tenant, live, admitted, capValue)
	}
}

// clClasses lists the work classes of a trace's outcomes.
func clClasses(tr docket.ClaimTrace) []docket.WorkClass {
	out := make([]docket.WorkClass, len(tr.Outcomes))
	for i, o := range tr.Outcomes {
		out[i] = o.Class
	}
	return out
}

func TestTenantFairCapTwo(t *testing.T) {
	e := newClTenantFair(t, 2)
	e.dueMany("t", "t", 5, clBase.Add(-time.Hour))

	tr := e.trace(clReq(clBase, 10, docket.PreferNone))
	clExpectIDs(t, "promotions", clOutcomeIDs(tr), []string{"t-1", "t-2"})
	wantDisp := append([]policy.Disposition{policy.DispositionGrant},
		clRepeat(policy.DispositionCapDebtDenial, policy.InspectionsPerCall-1)...)
	if got := clDispositions(tr); !slices.Equal(got, wantDisp) {
		t.Fatalf("dispositions = %v", got)
	}
	if e.admitted("t") != 2 || e.liveClaims("t") != 2 {
		t.Fatalf("admitted %d, live %d; want 2 and 2", e.admitted("t"), e.liveClaims("t"))
	}

	tr = e.trace(clReq(clBase, 10, docket.PreferNone))
	if len(tr.Outcomes) != 0 || !slices.Equal(clDispositions(tr), clRepeat(policy.DispositionCapDebtDenial, policy.InspectionsPerCall)) {
		t.Fatalf("at the cap: outcomes %v, dispositions %v", clOutcomeIDs(tr), clDispositions(tr))
	}

	// A released admission is reacquired at the cap without a promotion.
	e.release("t-1", clBase)
	tr = e.trace(clReq(clBase, 10, docket.PreferNone))
	clExpectIDs(t, "reacquisition", clOutcomeIDs(tr), []string{"t-1"})
	if tr.Outcomes[0].Class != docket.ClassAdmittedReady || tr.Result.Leases[0].Attempt != 2 {
		t.Fatalf("reacquisition = %+v, lease %+v", tr.Outcomes[0], tr.Result.Leases[0])
	}
	e.expectCapIdentity("t", 2)

	// Expired claims are stolen at the cap; still no promotion.
	later := clBase.Add(2 * time.Hour)
	tr = e.trace(clReq(later, 1, docket.PreferExpired))
	clExpectIDs(t, "steal", clOutcomeIDs(tr), []string{"t-1"})
	if tr.Outcomes[0].Class != docket.ClassExpired || !tr.Result.Leases[0].EligibleAt.Equal(clBase) {
		t.Fatalf("steal = %+v, lease %+v", tr.Outcomes[0], tr.Result.Leases[0])
	}
	e.expectCapIdentity("t", 2)
	if s := e.state("t-3"); s.Claimed || s.Marked {
		t.Fatalf("t-3 = %+v, want still queued", s)
	}

	// Finishing an admission frees its slot for the FIFO head.
	e.finish("t-2")
	tr = e.trace(clReq(later, 10, docket.PreferNone))
	clExpectIDs(t, "after a slot frees", clOutcomeIDs(tr), []string{"t-3"})
	e.expectCapIdentity("t", 2)
	if e.admitted("t") != 2 {
		t.Fatalf("admitted = %d, want 2", e.admitted("t"))
	}
}

func TestTenantFairCapTen(t *testing.T) {
	e := newClTenantFair(t, 10)
	ids := e.dueMany("t", "t", 25, clBase.Add(-time.Hour))
	tr := e.trace(clReq(clBase, 25, docket.PreferNone))
	clExpectIDs(t, "promotions", clOutcomeIDs(tr), ids[:10])
	want := append([]policy.Disposition{policy.DispositionGrant, policy.DispositionGrant},
		clRepeat(policy.DispositionCapDebtDenial, policy.InspectionsPerCall-2)...)
	if got := clDispositions(tr); !slices.Equal(got, want) {
		t.Fatalf("dispositions = %v", got)
	}
	if tr.Inspections[0].Outcomes != 8 || tr.Inspections[1].Outcomes != 2 {
		t.Fatalf("grant sizes %d, %d; want 8, 2", tr.Inspections[0].Outcomes, tr.Inspections[1].Outcomes)
	}
	if e.admitted("t") != 10 || e.liveClaims("t") != 10 || e.epochs()["t"] != 2 {
		t.Fatalf("admitted %d, live %d, epoch %d; want 10, 10, 2", e.admitted("t"), e.liveClaims("t"), e.epochs()["t"])
	}

	// Reacquisition and steal at the cap. The released row's wake_at and the
	// claims' claimed_at are all clBase, so the ids decide the order.
	e.release(ids[0], clBase)
	later := clBase.Add(2 * time.Hour)
	tr = e.trace(clReq(later, 3, docket.PreferNone))
	if got := clClasses(tr); !slices.Equal(got, []docket.WorkClass{docket.ClassAdmittedReady, docket.ClassExpired, docket.ClassExpired}) {
		t.Fatalf("classes at the cap = %v (outcomes %v)", got, clOutcomeIDs(tr))
	}
	clExpectIDs(t, "work at the cap", clOutcomeIDs(tr), ids[:3])
	e.expectCapIdentity("t", 10)
}

// TestTenantFairCapDebt: lowering the cap below the admitted count keeps the
// admissions (still reacquirable) and blocks promotion until the count falls
// below the new cap.
func TestTenantFairCapDebt(t *testing.T) {
	e := newClTenantFair(t, 10)
	ids := e.dueMany("t", "t", 12, clBase.Add(-time.Hour))
	e.trace(clReq(clBase, 10, docket.PreferNone))
	e.setOverride("t", 3)

	tr := e.trace(clReq(clBase, 5, docket.PreferNone))
	if len(tr.Outcomes) != 0 || tr.Inspections[0].Disposition != policy.DispositionCapDebtDenial {
		t.Fatalf("in debt: outcomes %v, first disposition %s", clOutcomeIDs(tr), tr.Inspections[0].Disposition)
	}
	e.release(ids[0], clBase)
	tr = e.trace(clReq(clBase, 5, docket.PreferNone))
	clExpectIDs(t, "reacquisition in debt", clOutcomeIDs(tr), ids[:1])
	if e.admitted("t") != 10 {
		t.Fatalf("admitted = %d, want 10 (debt is never trimmed)", e.admitted("t"))
	}

	e.finish(ids[1:8]...)
	if e.admitted("t") != 3 {
		t.Fatalf("admitted = %d, want 3", e.admitted("t"))
	}
	tr = e.trace(clReq(clBase, 5, docket.PreferNone))
	if len(tr.Outcomes) != 0 {
		t.Fatalf("at the lowered cap: outcomes %v, want none", clOutcomeIDs(tr))
	}
	e.finish(ids[8])
	tr = e.trace(clReq(clBase, 5, docket.PreferNone))
	clExpectIDs(t, "promotion below the lowered cap", clOutcomeIDs(tr), ids[10:11])
	e.expectCapIdentity("t", 3)
}

// TestTenantFairCapRaisePromotesFIFO: promotion follows (wake_at, id), and a
// raised cap promotes the next rows in that order.
func TestTenantFairCapRaisePromotesFIFO(t *testing.T) {
	e := newClTenantFair(t, 2)
	e.due("t", "r-a", clBase.Add(-10*time.Second))
	e.due("t", "r-b", clBase.Add(-50*time.Second))
	e.due("t", "r-c", clBase.Add(-30*time.Second))
	e.due("t", "r-d", clBase.Add(-30*time.Second))
	e.due("t", "r-e", clBase.Add(-40*time.Second))
	e.due("t", "r-f", clBase.Add(-20*time.Second))

	tr := e.trace(clReq(clBase, 10, docket.PreferNone))
	clExpectIDs(t, "cap 2", clOutcomeIDs(tr), []string{"r-b", "r-e"})
	e.setOverride("t", 5)
	tr = e.trace(clReq(clBase, 10, docket.PreferNone))
	clExpectIDs(t, "cap raised to 5", clOutcomeIDs(tr), []string{"r-c", "r-d", "r-f"})
	for _, l := range tr.Result.Leases {
		if l.Class != docket.ClassQueuedReady || e.state(l.RunID) != (clRunState{Claimed: true, Marked: true, Attempts: 1}) {
			t.Fatalf("lease %+v, state %+v", l, e.state(l.RunID))
		}
	}
	e.expectCapIdentity("t", 5)
}

// TestTenantFairFIFOHeadLockedBlocksPromotion: a head locked by another
// connection underfills the visit; nothing behind it is promoted, while
// admitted work of the same partition is still served. Every later visit
// finds only the held head as a lead row: lock_miss.
func TestTenantFairFIFOHeadLockedBlocksPromotion(t *testing.T) {
	e := newClTenantFair(t, 10)
	ids := e.dueMany("t", "q", 4, clBase.Add(-time.Hour))
	e.due("t", "q-admitted", clBase.Add(-time.Minute))
	e.markAdmitted("q-admitted")
	release := e.holdRun(ids[0])

	tr := e.trace(clReq(clBase, 4, docket.PreferNone))
	clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"q-admitted"})
	want := append([]policy.Disposition{policy.DispositionGrant},
		clRepeat(policy.DispositionLockMiss, policy.InspectionsPerCall-1)...)
	if got := clDispositions(tr); !slices.Equal(got, want) {
		t.Fatalf("dispositions = %v", got)
	}
	for _, id := range ids {
		if s := e.state(id); s.Claimed || s.Marked {
			t.Fatalf("%s = %+v, want still queued behind the locked head", id, s)
		}
	}

	release()
	tr = e.trace(clReq(clBase, 4, docket.PreferNone))
	clExpectIDs(t, "after the head is free", clOutcomeIDs(tr), ids)
}

// clPoisonReq is a claim request whose attempt limit is maxAttempts.
func clPoisonReq(limit, maxAttempts int) docket.ClaimRequest {
	req := clReq(clBase, limit, docket.PreferNone)
	req.MaxClaimAttempts = maxAttempts
	return req
}

// TestTenantFairPoisonAdmittedReleasesMarker: an admitted poison clears its
// marker, consumes demand without a token, and frees its slot in the same
// grant.
func TestTenantFairPoisonAdmittedReleasesMarker(t *testing.T) {
	e := newClTenantFair(t, 1)
	e.due("t", "p-admitted", clBase.Add(-time.Hour))
	e.markAdmitted("p-admitted")
	e.setAttempts("p-admitted", 3)
	e.due("t", "p-queued", clBase.Add(-time.Minute))

	tr := e.trace(clPoisonReq(2, 3))
	clExpectIDs(t, "outcomes", clOutcomeIDs(tr), []string{"p-admitted", "p-queued"})
	if len(tr.Inspections) != 1 || tr.Inspections[0].Outcomes != 2 || e.epochs()["t"] != 1 {
		t.Fatalf("inspections %+v, epoch %d; want one grant of 2", tr.Inspections, e.epochs()["t"])
	}
	p := tr.Result.Poisoned
	if len(p) != 1 || p[0].RunID != "p-admitted" || p[0].Attempts != 3 || p[0].Reason != "max_claim_attempts_exceeded" ||
		p[0].Class != docket.ClassAdmittedReady || !p[0].PoisonedAt.Equal(clBase) {
		t.Fatalf("poisoned = %+v", p)
	}
	if !tr.Outcomes[0].Poisoned || tr.Outcomes[0].Disposition != string(policy.OutcomeAdmittedReacquisition) {
		t.Fatalf("poison outcome = %+v", tr.Outcomes[0])
	}
	if s := e.state("p-admitted"); s != (clRunState{Poisoned: true, Attempts: 3}) {
		t.Fatalf("poisoned run = %+v, want poisoned without claim or marker", s)
	}
	if l := tr.Result.Leases; len(l) != 1 || l[0].RunID != "p-queued" || l[0].Class != docket.ClassQueuedReady {
		t.Fatalf("leases = %+v", l)
	}
	e.expectCapIdentity("t", 1)
}

// TestTenantFairPoisonQueuedOnlyAsHeadWithSlot: a queued poison candidate is
// poisoned only as the authoritative FIFO head with a free slot, and does not
// take the slot.
func TestTenantFairPoisonQueuedOnlyAsHeadWithSlot(t *testing.T) {
	t.Run("needs a free slot", func(t *testing.T) {
		e := newClTenantFair(t, 1)
		e.claimed("t", "x-held", clBase.Add(-time.Minute), true)
		e.due("t", "q-1", clBase.Add(-time.Hour))
		e.setAttempts("q-1", 3)
		e.due("t", "q-2", clBase.Add(-30*time.Minute))

		tr := e.trace(clPoisonReq(2, 3))
		if len(tr.Outcomes) != 0 || tr.Inspections[0].Disposition != policy.DispositionCapDebtDenial || e.state("q-1").Poisoned {
			t.Fatalf("without a slot: outcomes %v, disposition %s, q-1 %+v", clOutcomeIDs(tr), tr.Inspections[0].Disposition, e.state("q-1"))
		}
		e.finish("x-held")
		tr = e.trace(clPoisonReq(2, 3))
		clExpectIDs(t, "with a slot", clOutcomeIDs(tr), []string{"q-1", "q-2"})
		if !tr.Outcomes[0].Poisoned || tr.Outcomes[0].Disposition != string(policy.OutcomeQueuedPromotion) || tr.Outcomes[1].Poisoned {
			t.Fatalf("outcomes = %+v", tr.Outcomes)
		}
		if e.state("q-1") != (clRunState{Poisoned: true, Attempts: 3}) || e.admitted("t") != 1 {
			t.Fatalf("q-1 = %+v, admitted %d", e.state("q-1"), e.admitted("t"))
		}
	})
	t.Run("only as the head", func(t *testing.T) {
		e := newClTenantFair(t, 5)
		e.dueMany("t", "q", 2, clBase.Add(-time.Hour))
		e.setAttempts("q-2", 3)
		release := e.holdRun("q-1")
		tr := e.trace(clPoisonReq(1, 3))
		if len(tr.Outcomes) != 0 || e.state("q-2").Poisoned {
			t.Fatalf("behind a locked head: outcomes %v, q-2 %+v", clOutcomeIDs(tr), e.state("q-2"))
		}
		release()
		tr = e.trace(clPoisonReq(1, 3))
		clExpectIDs(t, "head first", clOutcomeIDs(tr), []string{"q-1"})
		if e.state("q-2").Poisoned {
			t.Fatal("q-2 was poisoned before it became the head")
		}
		tr = e.trace(clPoisonReq(1, 3))
		if clExpectIDs(t, "then the new head", clOutcomeIDs(tr), []string{"q-2"}); !tr.Outcomes[0].Poisoned {
			t.Fatalf("q-2 outcome = %+v, want poison", tr.Outcomes[0])
		}
	})
}

// TestTenantFairEngineInterlock: TenantFair refuses an uninitialized or
// inactive policy and an impossible policy shape; Legacy refuses tenant_fair
// mode. Nothing changes on a refusal.
func TestTenantFairEngineInterlock(t *testing.T) {
	t.Run("not initialized", func(t *testing.T) {
		e := newClTenantFair(t, 2)
		e.due("t", "t-1", clBase)
		execSQL(t, e.pool, `update docket_claim_policy set admission_mode = 'legacy', max_active = null,
			configured_max_active = null, policy_version = 0, initialized_at = null`)
		before := e.snapshot()
		_, err := e.client.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone))
		clExpectUnavailable(t, err, "not_initialized")
		if !errors.Is(err, docket.ErrNotInitialized) || e.snapshot() != before {
			t.Fatalf("err %v; state changed: %v", err, e.snapshot() != before)
		}
	})
	t.Run("inactive engines", func(t *testing.T) {
		e := newClTenantFair(t, 2)
		e.due("t", "t-1", clBase)
		legacy := openClient(t, e.pool, legacyConfig())
		before := e.snapshot()
		_, err := e.client.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone))
		clExpectUnavailable(t, err, "inactive_engine")
		if !errors.Is(err, docket.ErrInactiveEngine) || e.snapshot() != before {
			t.Fatalf("TenantFair in legacy mode: err %v", err)
		}
		if res, err := legacy.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone)); err != nil || res.Outcomes() != 1 {
			t.Fatalf("Legacy in legacy mode: %+v, %v", res, err)
		}
		fair := openClient(t, e.pool, tenantFairConfig(2))
		before = e.snapshot()
		_, err = legacy.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone))
		clExpectUnavailable(t, err, "inactive_engine")
		if e.snapshot() != before {
			t.Fatal("a refused Legacy call changed state")
		}
		if _, err := fair.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone)); err != nil {
			t.Fatalf("TenantFair after restart: %v", err)
		}
	})
	t.Run("malformed policy", func(t *testing.T) {
		e := newClTenantFair(t, 2)
		execSQL(t, e.pool, `alter table docket_claim_policy drop constraint docket_claim_policy_shape_check`)
		execSQL(t, e.pool, `update docket_claim_policy set initialized_at = null`)
		_, err := e.client.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone))
		clExpectUnavailable(t, err, "malformed_policy")
	})
}

// clTxModes are the transaction modes both engines must refuse.
var clTxModes = []struct {
	name   string
	opts   pgx.TxOptions
	reason string
}{
	{"read only", pgx.TxOptions{AccessMode: pgx.ReadOnly}, "read_only_transaction"},
	{"repeatable read", pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, "unsupported_isolation"},
	{"serializable", pgx.TxOptions{IsoLevel: pgx.Serializable}, "unsupported_isolation"},
}

// expectRefusedInTx runs a claim inside a transaction with opts and expects
// the refusal reason and an unchanged domain.
func (e *clEnv) expectRefusedInTx(opts pgx.TxOptions, reason string) {
	e.t.Helper()
	ctx := testContext(e.t)
	before := e.snapshot()
	tx, err := e.pool.BeginTx(ctx, opts)
	if err != nil {
		e.t.Fatalf("begin: %v", err)
	}
	_, err = e.client.ClaimDueTx(ctx, tx, clReq(clBase, 5, docket.PreferNone))
	clExpectUnavailable(e.t, err, reason)
	if err := tx.Commit(ctx); err != nil {
		e.t.Fatalf("commit after the refusal: %v", err)
	}
	if e.snapshot() != before {
		e.t.Fatal("a refused claim changed state")
	}
}

func TestTenantFairFailsClosedInUnsupportedTransactions(t *testing.T) {
	e := newClTenantFair(t, 2)
	e.dueMany("t", "t", 3, clBase.Add(-time.Hour))
	for _, m := range clTxModes {
		t.Run(m.name, func(t *testing.T) {
			e.t = t
			e.expectRefusedInTx(m.opts, m.reason)
		})
	}
}

// TestTenantFairPolicyCursorContention: a held policy row yields
// lock_contention with nothing changed, and the caller's lock_timeout is the
// same after the call whether it was lower, higher or unset.
func TestTenantFairPolicyCursorContention(t *testing.T) {
	e := newClTenantFair(t, 2)
	e.dueMany("t", "t", 3, clBase.Add(-time.Hour))
	release := e.holdLock(`select 1 from docket_claim_policy where id = 1 for update`)
	before := e.snapshot()

	_, err := e.client.ClaimDue(testContext(t), clReq(clBase, 1, docket.PreferNone))
	clExpectUnavailable(t, err, "lock_contention")
	if e.snapshot() != before {
		t.Fatal("a contended claim changed state")
	}
	// "0" waits forever unless the engine caps the wait itself.
	for _, callerTimeout := range []string{"40ms", "5s", "0"} {
		got, err := e.claimWithLockTimeout(callerTimeout)
		clExpectUnavailable(t, err, "lock_contention")
		if got != callerTimeout {
			t.Fatalf("lock_timeout after the call = %q, want the caller's %q", got, callerTimeout)
		}
	}
	if e.snapshot() != before {
		t.Fatal("contended claims changed state")
	}

	release()
	got, err := e.claimWithLockTimeout("5s")
	if err != nil || got != "5s" {
		t.Fatalf("uncontended claim: err %v, lock_timeout after %q; want nil and 5s", err, got)
	}
}

// claimWithLockTimeout claims inside a transaction whose lock_timeout is
// callerTimeout and returns the transaction's lock_timeout after the call.
func (e *clEnv) claimWithLockTimeout(callerTimeout string) (string, error) {
	e.t.Helper()
	ctx := testContext(e.t)
	var after string
	var claimErr error
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("set local lock_timeout = '%s'", callerTimeout)); err != nil {
			return err
		}
		_, claimErr = e.client.ClaimDueTx(ctx, tx, clReq(clBase, 1, docket.PreferNone))
		return tx.QueryRow(ctx, "select current_setting('lock_timeout')").Scan(&after)
	})
	if err != nil {
		e.t.Fatalf("claim transaction: %v", err)
	}
	return after, claimErr
}

// TestTenantFairRollbackLeavesNothing: a claim inside a rolled-back caller
// transaction persists no cursor, epoch, marker or claim.
func TestTenantFairRollbackLeavesNothing(t *testing.T) {
	e := newClTenantFair(t, 3)
	e.dueMany("a", "a", 3, clBase.Add(-time.Hour))
	e.dueMany("b", "b", 3, clBase.Add(-time.Hour))
	e.claimed("b", "b-expired", clBase.Add(-2*time.Hour), true)
	before := e.snapshot()
	ctx := testContext(t)
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.client.ClaimDueTx(ctx, tx, clReq(clBase, 6, docket.PreferNone))
	if err != nil || res.Outcomes() != 6 {
		t.Fatalf("claim in transaction: %d outcomes, %v; want 6", res.Outcomes(), err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if after := e.snapshot(); after != before {
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
			legacy := newClLegacy(t)
			seedSeparation(legacy, n)
			if got := legacyBypass(legacy); got != n {
				t.Fatalf("Legacy bypass = %d, want exactly %d", got, n)
			}

			fair := newClTenantFair(t, 100)
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
func seedSeparation(e *clEnv, n int) {
	e.dueMany("hot", "hot", n, clBase.Add(-time.Hour))
	e.due("target", "target-1", clBase.Add(-time.Hour+time.Duration(n)*time.Second))
}

// legacyBypass counts the outcomes before the target's, completing each.
func legacyBypass(e *clEnv) int {
	e.t.Helper()
	for bypass := 0; ; bypass++ {
		tr := e.trace(clReq(clBase, 1, docket.PreferNone))
		if len(tr.Outcomes) != 1 {
			e.t.Fatalf("Legacy call %d: %d outcomes", bypass+1, len(tr.Outcomes))
		}
		if tr.Outcomes[0].RunID == "target-1" {
			return bypass
		}
		e.finish(tr.Outcomes[0].RunID)
	}
}

// tenantFairBypass counts the hot grants and outcomes before the target's
// grant, completing each outcome before the next call.
func tenantFairBypass(e *clEnv) (grants, outcomes int) {
	e.t.Helper()
	for call := 1; call <= 100; call++ {
		tr := e.trace(clReq(clBase, 1, docket.PreferNone))
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
		e.finish(clOutcomeIDs(tr)...)
	}
	e.t.Fatal("the target never got a grant")
	return 0, 0
}

// TestTenantFairConcurrentClaimersRespectCaps: 8 claimers drain 2,000 runs of
// 50 tenants with mixed caps. No run is leased twice, every run is leased,
// and after every call no tenant is above its cap or has more live claims
// than admissions.
func TestTenantFairConcurrentClaimersRespectCaps(t *testing.T) {
	const runs, tenants, claimers = 2000, 50, 8
	pool := clPoolWithSize(t, claimers+2)
	client := openClient(t, pool, tenantFairConfig(3))
	execSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('c-%s', g), format('t%s', lpad((g % $2)::text, 2, '0')), 'g', 'h1', 'running', '{}',
		       $3::timestamptz - make_interval(secs => $1 - g)
		  from generate_series(1, $1) g`, runs, tenants, clBase)
	execSQL(t, pool, `update docket_claim_partitions
		   set max_active = case right(scope_key, 1)::int % 5 when 0 then 1 when 1 then 2 when 2 then 5 when 3 then 10 end`)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	results := make(chan clClaimerResult, claimers)
	progress := newClaimProgress()
	for range claimers {
		go func() { results <- clClaimer(ctx, client, pool, runs, progress) }()
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
	if done := queryInt64(t, pool, `select count(*) from docket_runs where status = 'done'`); done != runs {
		t.Fatalf("%d runs done, want %d", done, runs)
	}
	t.Logf("%d lock_contention refusals retried", contended)
}

// clClaimerResult is what one concurrent claimer saw.
type clClaimerResult struct {
	runIDs    []string
	contended int
	err       error
}

// clCapViolations counts tenants above their cap or with more live claims
// than admissions.
const clCapViolations = `
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

// clClaimer claims and completes runs until all runs are done. A call that
// leases nothing waits for another claimer's commit, which alone can free
// work at the claimers' fixed clock.
func clClaimer(ctx context.Context, client *docket.Client, pool *pgxpool.Pool, runs int, progress *claimProgress) clClaimerResult {
	var r clClaimerResult
	for {
		committed := progress.next()
		var done int
		if err := pool.QueryRow(ctx, `select count(*) from docket_runs where status = 'done'`).Scan(&done); err != nil {
			r.err = err
			return r
		}
		if done == runs {
			return r
		}
		res, err := client.ClaimDue(ctx, clReq(clBase, 5, docket.PreferNone))
		if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok && unavailable.Reason == "lock_contention" {
			r.contended++
			continue
		}
		if err != nil {
			r.err = err
			return r
		}
		var violations int
		if err := pool.QueryRow(ctx, clCapViolations).Scan(&violations); err != nil || violations != 0 {
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
				Step: 1, Schedule: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
				r.err = fmt.Errorf("complete %s: %w", l.RunID, err)
				return r
			}
			progress.mark()
		}
		if len(res.Leases) == 0 {
			if err := progress.wait(ctx, committed); err != nil {
				r.err = err
				return r
			}
		}
	}
}
