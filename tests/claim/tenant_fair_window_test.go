package claim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The full-ring walk reads its positions a window at a time and locks a run
// of positions without a page in one statement. These tests pin what that
// must not change: the visited positions, their dispositions (a held
// partition inside a run is partition_lock_skip, the rest of the run
// empty_page), the grants and the cursor; and a production call, which
// counts a run's inspections without a trace row each, must end exactly
// where a traced call ends.

// windowTenants is the ring of the tests: 40 tenants w00..w39 at positions
// 1..40, each with one run due tomorrow, except the tenants in due, which
// hold one run due now. It returns the tenant at each position.
func windowTenants(t *testing.T, e *testkit.ClaimEnv, due ...int) []string {
	t.Helper()
	tenants := make([]string, 40)
	for i := range tenants {
		tenants[i] = fmt.Sprintf("w%02d", i)
		wake := testkit.ClaimBase.Add(24 * time.Hour)
		if slices.Contains(due, i) {
			wake = testkit.ClaimBase.Add(-time.Hour)
		}
		e.Due(tenants[i], tenants[i]+"-run", wake)
		if got := e.Position(tenants[i]); got != int64(i+1) {
			t.Fatalf("%s at ring position %d, want %d", tenants[i], got, i+1)
		}
	}
	return tenants
}

// windowBegin starts a transaction on e's pool that the test rolls back, so
// that several calls can start from the same state.
func windowBegin(t *testing.T, e *testkit.ClaimEnv) pgx.Tx {
	t.Helper()
	tx, err := e.Pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(testkit.Context(t)) })
	return tx
}

// windowCursor is the cursor as tx sees it.
func windowCursor(t *testing.T, tx pgx.Tx) int64 {
	t.Helper()
	var cursor int64
	if err := tx.QueryRow(testkit.Context(t), `select scan_ring_position from docket_claim_policy where id = 1`).Scan(&cursor); err != nil {
		t.Fatal(err)
	}
	return cursor
}

// TestTenantFairWindowedWalkDispositions: from cursor 0 an unfilled call
// walks positions 1..32. The first window (positions 1..4) is one empty run;
// the second holds a page at 6 and at 22, so its runs are 5, 7..21 and
// 23..32. The held partitions at 12 (inside a run) and 31 (near the end of
// the last run) are partition_lock_skip; every other run position is
// empty_page; the two pages grant. A production call from the same state
// takes the same two runs and leaves the cursor at 32 too.
func TestTenantFairWindowedWalkDispositions(t *testing.T) {
	const defaultCap = 10
	e := testkit.NewClaimTenantFair(t, defaultCap)
	tenants := windowTenants(t, e, 5, 21)
	e.HoldPartition(tenants[11])
	e.HoldPartition(tenants[30])
	req := testkit.ClaimReq(testkit.ClaimBase, 8, docket.PreferNone)
	ctx := testkit.Context(t)

	tx := windowBegin(t, e)
	tr, err := e.Client.TraceClaimDueTx(ctx, tx, req)
	if err != nil {
		t.Fatal(err)
	}
	var wantPositions []int64
	var wantDispositions []policy.Disposition
	for p := int64(1); p <= 32; p++ {
		wantPositions = append(wantPositions, p)
		switch p {
		case 6, 22:
			wantDispositions = append(wantDispositions, policy.DispositionGrant)
		case 12, 31:
			wantDispositions = append(wantDispositions, policy.DispositionPartitionLockSkip)
		default:
			wantDispositions = append(wantDispositions, policy.DispositionEmptyPage)
		}
	}
	if got := positions(tr); !slices.Equal(got, wantPositions) {
		t.Fatalf("positions = %v, want %v", got, wantPositions)
	}
	if got := dispositions(tr); !slices.Equal(got, wantDispositions) {
		t.Fatalf("dispositions = %v, want %v", got, wantDispositions)
	}
	expectContiguous(t, tr, 0)
	for i, in := range tr.Inspections {
		wantOutcomes := 0
		if in.Disposition == policy.DispositionGrant {
			wantOutcomes = 1
		}
		if in.ScopeKey != tenants[i] || in.Outcomes != wantOutcomes || in.EpochDelta != wantOutcomes || in.Demand != 8 {
			t.Fatalf("inspection %d = %+v, want scope %s, %d outcomes and epoch delta", i, in, tenants[i], wantOutcomes)
		}
	}
	testkit.ClaimExpectIDs(t, "traced outcomes", testkit.ClaimOutcomeIDs(tr), []string{"w05-run", "w21-run"})
	if o := tr.Outcomes; o[0].Visit != 6 || o[1].Visit != 22 {
		t.Fatalf("outcome visits %d and %d, want 6 and 22", o[0].Visit, o[1].Visit)
	}
	if got := windowCursor(t, tx); got != 32 {
		t.Fatalf("cursor after the traced call = %d, want 32", got)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	tx = windowBegin(t, e)
	res, err := e.Client.ClaimDueTx(ctx, tx, req)
	if err != nil {
		t.Fatal(err)
	}
	var leased []string
	for _, l := range res.Leases {
		leased = append(leased, l.RunID)
	}
	testkit.ClaimExpectIDs(t, "production leases", leased, []string{"w05-run", "w21-run"})
	if got := windowCursor(t, tx); got != 32 {
		t.Fatalf("cursor after the production call = %d, want 32", got)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTenantFairWindowedWalkStopsAtFilledDemand: a call of demand 1 whose
// first grant is at position 3 ends there. The empty run before it
// (positions 1 and 2) is locked, the positions after it are not: another
// transaction can lock position 4's partition without waiting, and the
// cursor stops at 3, in production as in trace mode.
func TestTenantFairWindowedWalkStopsAtFilledDemand(t *testing.T) {
	const defaultCap = 10
	e := testkit.NewClaimTenantFair(t, defaultCap)
	tenants := windowTenants(t, e, 2, 3)
	req := testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)
	ctx := testkit.Context(t)

	for _, traced := range []bool{true, false} {
		tx := windowBegin(t, e)
		var outcomes []string
		if traced {
			tr, err := e.Client.TraceClaimDueTx(ctx, tx, req)
			if err != nil {
				t.Fatal(err)
			}
			want := []policy.Disposition{policy.DispositionEmptyPage, policy.DispositionEmptyPage, policy.DispositionGrant}
			if got := dispositions(tr); !slices.Equal(got, want) {
				t.Fatalf("dispositions = %v, want %v", got, want)
			}
			expectContiguous(t, tr, 0)
			outcomes = testkit.ClaimOutcomeIDs(tr)
		} else {
			res, err := e.Client.ClaimDueTx(ctx, tx, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range res.Leases {
				outcomes = append(outcomes, l.RunID)
			}
		}
		testkit.ClaimExpectIDs(t, "outcomes", outcomes, []string{"w02-run"})
		if got := windowCursor(t, tx); got != 3 {
			t.Fatalf("traced %v: cursor = %d, want 3", traced, got)
		}
		// The call's transaction is still open: it holds the partitions of
		// positions 1..3 and no other.
		var locked []string
		rows, err := e.Pool.Query(ctx, `select scope_key from docket_claim_partitions
			 where scope_key = any ($1) order by scope_key for no key update skip locked`, tenants[:5])
		if err == nil {
			locked, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"w03", "w04"}; !slices.Equal(locked, want) {
			t.Fatalf("traced %v: partitions another transaction can lock = %v, want %v", traced, locked, want)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
