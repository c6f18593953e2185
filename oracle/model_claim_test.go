package oracle

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestClaimCursorContiguityAndWrap(t *testing.T) {
	m := newTestModel(t, 10)
	for _, s := range []string{"a", "b", "c"} {
		insert(t, m, s, s+"1", at(0))
		insert(t, m, s, s+"2", at(1))
	}
	now := at(10)
	var got []string
	var cursors [][2]int64
	for range 4 {
		res := claim(t, m, now, 1, 5, PreferNone)
		if len(res.Inspections) != 1 || len(res.Outcomes) != 1 {
			t.Fatalf("call = %+v, want one visit and one outcome", res)
		}
		got = append(got, res.Outcomes[0].RunID)
		cursors = append(cursors, [2]int64{res.CursorBefore, res.CursorAfter})
	}
	if diff := cmp.Diff([]string{"a1", "b1", "c1", "a2"}, got); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][2]int64{{0, 1}, {1, 2}, {2, 3}, {3, 1}}, cursors); diff != "" {
		t.Fatalf("cursors (-want +got):\n%s", diff)
	}
	// Finishing b's runs removes position 2 from the ring; the walk skips it.
	for _, id := range []string{"b1"} {
		r := mustRun(t, m, id)
		if err := m.Commit(id, r.Token, r.CheckpointSeq, Schedule{Kind: ReleaseTerminal, Status: StatusDone}, now); err != nil {
			t.Fatal(err)
		}
	}
	res := claim(t, m, now, 1, 5, PreferNone) // cursor 1 -> b (b2 still ready)
	if res.Outcomes[0].RunID != "b2" {
		t.Fatalf("got %v, want b2", runIDs(res.Outcomes))
	}
	r := mustRun(t, m, "b2")
	if err := m.Commit("b2", r.Token, r.CheckpointSeq, Schedule{Kind: ReleaseTerminal, Status: StatusDone}, now); err != nil {
		t.Fatal(err)
	}
	if _, inRing := m.Ring()[2]; inRing {
		t.Fatal("position 2 still in the ring")
	}
	res = claim(t, m, now, 1, 5, PreferNone) // cursor 2 -> 3 (c2)
	if res.Outcomes[0].RunID != "c2" || res.Inspections[0].CursorBefore != 2 || res.Inspections[0].Position != 3 {
		t.Fatalf("got %+v", res)
	}
	if p, _ := m.Partition("b"); p.Position != 2 || p.Unfinished != 0 {
		t.Fatalf("partition b = %+v, want kept at position 2 with count 0", p)
	}
}

func TestClaimExhaustsSWhenUnfilled(t *testing.T) {
	m := newTestModel(t, 10)
	for _, s := range []string{"a", "b", "c"} {
		insert(t, m, s, s+"1", at(0))
	}
	res := claim(t, m, at(10), 100, 5, PreferNone)
	if len(res.Inspections) != DefaultS || len(res.Outcomes) != 3 {
		t.Fatalf("inspections = %d, outcomes = %d", len(res.Inspections), len(res.Outcomes))
	}
	want := []Disposition{DispGrant, DispGrant, DispGrant}
	for range DefaultS - 3 {
		want = append(want, DispEmptyPage)
	}
	if diff := cmp.Diff(want, dispositions(res.Inspections)); diff != "" {
		t.Fatalf("dispositions (-want +got):\n%s", diff)
	}
	for i, p := range positions(res.Inspections) {
		if p != int64(i%3+1) {
			t.Fatalf("visit %d at position %d", i+1, p)
		}
	}
	if res.CursorAfter != 2 || m.Cursor() != 2 { // visit 32 lands on position 2
		t.Fatalf("cursor = %d/%d, want 2", res.CursorAfter, m.Cursor())
	}

	// Dormant future timers keep a position in the ring: S empty pages.
	m2 := newTestModel(t, 10)
	insert(t, m2, "z", "z1", at(1000))
	res = claim(t, m2, at(10), 1, 5, PreferNone)
	if len(res.Inspections) != DefaultS || len(res.Outcomes) != 0 || m2.Cursor() != 1 {
		t.Fatalf("dormant call = %d inspections, %d outcomes, cursor %d", len(res.Inspections), len(res.Outcomes), m2.Cursor())
	}
}

func TestClaimEmptyRing(t *testing.T) {
	m := newTestModel(t, 10)
	res := claim(t, m, at(10), 3, 5, PreferNone)
	if len(res.Inspections) != 0 || res.CursorAfter != 0 || m.Cursor() != 0 {
		t.Fatalf("empty ring call = %+v", res)
	}
	insert(t, m, "a", "a1", at(0))
	o := claim(t, m, at(10), 1, 5, PreferNone).Outcomes[0]
	finish(t, m, o, at(11))
	res = claim(t, m, at(12), 3, 5, PreferNone)
	if len(res.Inspections) != 0 || m.Cursor() != 1 {
		t.Fatalf("call over an emptied ring = %+v, cursor %d", res, m.Cursor())
	}
}

func TestClaimStopsWhenFilled(t *testing.T) {
	m := newTestModel(t, 10)
	for i := range 5 {
		insert(t, m, "a", string(rune('p'+i)), at(i))
	}
	insert(t, m, "b", "b1", at(0))
	res := claim(t, m, at(10), 3, 5, PreferNone)
	if len(res.Inspections) != 1 || len(res.Outcomes) != 3 || m.Cursor() != 1 {
		t.Fatalf("call = %d inspections, %d outcomes, cursor %d", len(res.Inspections), len(res.Outcomes), m.Cursor())
	}
}

func TestClaimEpochPerGrantAndQLimit(t *testing.T) {
	m := newTestModel(t, 100)
	for i := range 20 {
		insert(t, m, "a", "a"+string(rune('A'+i)), at(i))
	}
	res := claim(t, m, at(100), 20, 5, PreferNone)
	var counts []int
	for _, in := range res.Inspections {
		counts = append(counts, in.Outcomes)
		if in.EpochDelta != 1 {
			t.Fatalf("grant epoch delta = %d", in.EpochDelta)
		}
	}
	if diff := cmp.Diff([]int{8, 8, 4}, counts); diff != "" {
		t.Fatalf("outcomes per visit (-want +got):\n%s", diff)
	}
	for i, o := range res.Outcomes {
		if o.Ordinal != i+1 || o.Visit != i/8+1 {
			t.Fatalf("outcome %d has ordinal %d, visit %d", i, o.Ordinal, o.Visit)
		}
	}
	if p, _ := m.Partition("a"); p.Epoch != 3 {
		t.Fatalf("epoch = %d, want 3 (one per grant)", p.Epoch)
	}
	// Unsuccessful inspections leave the epoch alone.
	res = claim(t, m, at(100), 1, 5, PreferNone)
	if len(res.Outcomes) != 0 || len(res.Inspections) != DefaultS {
		t.Fatalf("call = %+v", res)
	}
	if p, _ := m.Partition("a"); p.Epoch != 3 {
		t.Fatalf("epoch after empty call = %d, want 3", p.Epoch)
	}
}

func TestClaimKLimit(t *testing.T) {
	t.Run("pages", func(t *testing.T) {
		m := newTestModel(t, 1000)
		for i := range 20 {
			insert(t, m, "a", "q"+string(rune('A'+i)), at(i))
		}
		page := m.tenantFairPages("a", at(100), at(0), 5)
		if len(page) != DefaultK {
			t.Fatalf("queued page = %d rows, want K", len(page))
		}
		for i, c := range page {
			if c.admitted || c.queueNo != i+1 || c.run.RunID != "q"+string(rune('A'+i)) {
				t.Fatalf("page[%d] = %+v", i, c)
			}
		}
		// Admit 10 (claim, then release: admitted-ready), leaving 10 queued.
		for _, o := range claim(t, m, at(100), 10, 5, PreferNone).Outcomes {
			release(t, m, o, at(101))
		}
		page = m.tenantFairPages("a", at(200), at(0), 5)
		var adm, q int
		for _, c := range page {
			if c.admitted {
				adm++
			} else {
				q++
			}
		}
		if adm != 10 || q != DefaultK-10 {
			t.Fatalf("page = %d admitted + %d queued, want 10 + %d", adm, q, DefaultK-10)
		}
	})
	t.Run("frozen set", func(t *testing.T) {
		m, err := NewModelWithBudgets(100, Budgets{S: 4, Q: 8, K: 2})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			insert(t, m, "a", "q"+string(rune('A'+i)), at(i))
		}
		res := claim(t, m, at(100), 8, 5, PreferNone)
		var counts []int
		for _, in := range res.Inspections {
			counts = append(counts, in.Outcomes)
		}
		if diff := cmp.Diff([]int{2, 2, 1, 0}, counts); diff != "" {
			t.Fatalf("outcomes per visit with K = 2 (-want +got):\n%s", diff)
		}
	})
}

func TestClaimFIFOPromotion(t *testing.T) {
	m := newTestModel(t, 10)
	insert(t, m, "a", "r1", at(5))
	insert(t, m, "a", "r2", at(1))
	insert(t, m, "a", "r3", at(3))
	insert(t, m, "a", "r4", at(3))
	res := claim(t, m, at(10), 4, 5, PreferNone)
	if diff := cmp.Diff([]string{"r2", "r3", "r4", "r1"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("promotion order (-want +got):\n%s", diff)
	}
	for _, o := range res.Outcomes {
		r := mustRun(t, m, o.RunID)
		if o.Class != ClassQueuedReady || o.Disposition != OutcomeQueuedPromotion || !r.Admitted || !r.AdmittedAt.Equal(at(10)) || r.Token != o.Token || o.ClaimAttempt != 1 {
			t.Fatalf("outcome %+v, run %+v", o, r)
		}
	}
}

func TestClaimCapAndDebt(t *testing.T) {
	m := newTestModel(t, 2)
	for i := 1; i <= 4; i++ {
		insert(t, m, "a", "q"+string(rune('0'+i)), at(i))
	}
	now := at(10)
	res := claim(t, m, now, 4, 5, PreferNone)
	if diff := cmp.Diff([]string{"q1", "q2"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	want := []Disposition{DispGrant}
	for range DefaultS - 1 {
		want = append(want, DispCapDebtDenial)
	}
	if diff := cmp.Diff(want, dispositions(res.Inspections)); diff != "" {
		t.Fatalf("dispositions (-want +got):\n%s", diff)
	}
	if c := m.Counts("a", now); c.Admitted != 2 || c.LiveClaims != 2 || c.Queued != 2 || c.Debt != 0 {
		t.Fatalf("counts = %+v", c)
	}
	// Lowering the cap creates debt without revoking anything.
	if err := m.SetOverride("a", 1); err != nil {
		t.Fatal(err)
	}
	if c := m.Counts("a", now); c.Admitted != 2 || c.Cap != 1 || c.Debt != 1 {
		t.Fatalf("counts after lowering = %+v", c)
	}
	for _, o := range res.Outcomes {
		release(t, m, o, at(11))
	}
	// Admitted work is reacquired in debt; no promotion.
	res = claim(t, m, at(12), 4, 5, PreferNone)
	if diff := cmp.Diff([]string{"q1", "q2"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("reacquisition in debt (-want +got):\n%s", diff)
	}
	for _, o := range res.Outcomes {
		if o.Disposition != OutcomeAdmittedReacquisition || o.Class != ClassAdmittedReady {
			t.Fatalf("outcome = %+v", o)
		}
	}
	finish(t, m, res.Outcomes[0], at(13))
	// Admitted 1 == cap 1: still no slot.
	res2 := claim(t, m, at(14), 1, 5, PreferNone)
	if len(res2.Outcomes) != 0 || res2.Inspections[0].Disposition != DispCapDebtDenial {
		t.Fatalf("call at the cap = %+v", res2)
	}
	finish(t, m, res.Outcomes[1], at(15))
	res2 = claim(t, m, at(16), 1, 5, PreferNone)
	if diff := cmp.Diff([]string{"q3"}, runIDs(res2.Outcomes)); diff != "" {
		t.Fatalf("promotion after debt (-want +got):\n%s", diff)
	}
	if err := m.ResetOverride("a"); err != nil {
		t.Fatal(err)
	}
	if c := m.Counts("a", at(16)); c.Cap != 2 {
		t.Fatalf("cap after reset = %d, want the default 2", c.Cap)
	}
}

func TestClaimReacquisitionAtCap(t *testing.T) {
	m := newTestModel(t, 1)
	insert(t, m, "a", "r1", at(1))
	insert(t, m, "a", "r2", at(2))
	o := claim(t, m, at(10), 1, 5, PreferNone).Outcomes[0]
	release(t, m, o, at(11))
	res := claim(t, m, at(12), 2, 5, PreferNone)
	if diff := cmp.Diff([]string{"r1"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	if res.Outcomes[0].Disposition != OutcomeAdmittedReacquisition || res.Inspections[0].Disposition != DispGrant ||
		res.Inspections[1].Disposition != DispCapDebtDenial {
		t.Fatalf("call = %+v", res)
	}
	if r := mustRun(t, m, "r1"); !r.AdmittedAt.Equal(at(10)) {
		t.Fatalf("reacquisition changed the marker: %+v", r)
	}
}

func TestClaimAdmittedPoisonFreesSlot(t *testing.T) {
	m := newTestModel(t, 1)
	insert(t, m, "a", "r1", at(1))
	insert(t, m, "a", "r2", at(2))
	o := claim(t, m, at(10), 1, 5, PreferNone).Outcomes[0]
	release(t, m, o, at(11))
	res := claim(t, m, at(12), 2, 1, PreferNone) // r1 has 1 attempt >= 1
	if diff := cmp.Diff([]string{"r1", "r2"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	if !res.Outcomes[0].Poison || res.Outcomes[0].Token != "" || res.Outcomes[0].Class != ClassAdmittedReady ||
		res.Outcomes[1].Disposition != OutcomeQueuedPromotion {
		t.Fatalf("outcomes = %+v", res.Outcomes)
	}
	r1 := mustRun(t, m, "r1")
	if !r1.Poisoned || r1.Admitted || r1.Claimed() || r1.HasWake || r1.PoisonReason != PoisonMaxClaimAttempts || r1.Attempts != 1 {
		t.Fatalf("poisoned run = %+v", r1)
	}
	if c := m.Counts("a", at(12)); c.Admitted != 1 || c.Unfinished != 2 {
		t.Fatalf("counts = %+v", c)
	}
}

// queuedPoisonSetup makes p1 a queued row with one claim attempt (claimed,
// then abandoned back to wake at(0)), then inserts q2.
func queuedPoisonSetup(t *testing.T, defaultCap int) *Model {
	t.Helper()
	m := newTestModel(t, defaultCap)
	insert(t, m, "a", "p1", at(1))
	o := claim(t, m, at(5), 1, 5, PreferNone).Outcomes[0]
	if err := m.AbandonClaim("p1", o.Token, o.CheckpointSeq, at(6), at(0), 10); err != nil {
		t.Fatal(err)
	}
	insert(t, m, "a", "q2", at(2))
	return m
}

func TestClaimQueuedPoison(t *testing.T) {
	t.Run("FIFO head with a free slot", func(t *testing.T) {
		m := queuedPoisonSetup(t, 2)
		res := claim(t, m, at(10), 2, 1, PreferNone)
		if diff := cmp.Diff([]string{"p1", "q2"}, runIDs(res.Outcomes)); diff != "" {
			t.Fatalf("outcomes (-want +got):\n%s", diff)
		}
		if !res.Outcomes[0].Poison || res.Outcomes[0].Class != ClassQueuedReady || res.Outcomes[1].Poison {
			t.Fatalf("outcomes = %+v", res.Outcomes)
		}
		if c := m.Counts("a", at(10)); c.Admitted != 1 {
			t.Fatalf("queued poison took a slot: %+v", c)
		}
	})
	t.Run("no free slot", func(t *testing.T) {
		m := queuedPoisonSetup(t, 1)
		insert(t, m, "b", "b1", at(0))
		if err := m.SetOverride("a", 1); err != nil {
			t.Fatal(err)
		}
		// Fill a's only slot with a live claim on a third row.
		insert(t, m, "a", "r0", at(-10))
		res := claim(t, m, at(10), 1, 5, PreferNone) // cursor 1 -> b
		if res.Outcomes[0].RunID != "b1" {
			t.Fatalf("got %v", runIDs(res.Outcomes))
		}
		res = claim(t, m, at(10), 1, 5, PreferNone) // -> a: r0 promoted
		if res.Outcomes[0].RunID != "r0" {
			t.Fatalf("got %v", runIDs(res.Outcomes))
		}
		res = claim(t, m, at(11), 1, 1, PreferNone)
		if len(res.Outcomes) != 0 || res.Inspections[1].Disposition != DispCapDebtDenial {
			t.Fatalf("call = %+v", res)
		}
		if r := mustRun(t, m, "p1"); r.Poisoned {
			t.Fatal("queued poison without a free slot")
		}
	})
	t.Run("only as FIFO head", func(t *testing.T) {
		m := newTestModel(t, 5)
		insert(t, m, "a", "p1", at(1))
		o := claim(t, m, at(5), 1, 5, PreferNone).Outcomes[0]
		if err := m.AbandonClaim("p1", o.Token, o.CheckpointSeq, at(6), at(3), 10); err != nil {
			t.Fatal(err)
		}
		insert(t, m, "a", "q0", at(2)) // older healthy queued row
		res := claim(t, m, at(10), 1, 1, PreferNone)
		if diff := cmp.Diff([]string{"q0"}, runIDs(res.Outcomes)); diff != "" || res.Outcomes[0].Poison {
			t.Fatalf("outcomes (-want +got):\n%s", diff)
		}
		if r := mustRun(t, m, "p1"); r.Poisoned {
			t.Fatal("poison candidate bypassed the FIFO head")
		}
	})
}

// preferenceSetup builds partition a with an expired admitted claim e1
// (claimed at 1) and an admitted-ready row r1 (wake 3).
func preferenceSetup(t *testing.T) *Model {
	t.Helper()
	m := newTestModel(t, 10)
	insert(t, m, "a", "e1", at(0))
	claim(t, m, at(1), 1, 5, PreferNone)
	insert(t, m, "a", "r1", at(2))
	o := claim(t, m, at(2), 1, 5, PreferNone).Outcomes[0]
	if o.RunID != "r1" {
		t.Fatalf("setup claimed %s", o.RunID)
	}
	release(t, m, o, at(3))
	return m
}

func TestClaimDemandOnePreference(t *testing.T) {
	now, cutoff := at(100), at(50)
	tests := []struct {
		pref  Preference
		want  string
		class WorkClass
	}{
		{PreferReady, "r1", ClassAdmittedReady},
		{PreferExpired, "e1", ClassExpired},
		{PreferNone, "e1", ClassExpired}, // older eligible time wins
	}
	for _, tc := range tests {
		t.Run(string(tc.pref), func(t *testing.T) {
			m := preferenceSetup(t)
			res := claimCutoff(t, m, now, cutoff, 1, 5, tc.pref)
			if len(res.Outcomes) != 1 || res.Outcomes[0].RunID != tc.want || res.Outcomes[0].Class != tc.class {
				t.Fatalf("outcomes = %+v", res.Outcomes)
			}
		})
	}
	t.Run("fallback to ready", func(t *testing.T) {
		m := preferenceSetup(t)
		res := claimCutoff(t, m, now, at(0), 1, 5, PreferExpired) // nothing expired
		if res.Outcomes[0].RunID != "r1" {
			t.Fatalf("outcomes = %+v", res.Outcomes)
		}
	})
	t.Run("fallback to expired", func(t *testing.T) {
		m := preferenceSetup(t)
		res := claimCutoff(t, m, now, cutoff, 1, 5, PreferReady)
		if res.Outcomes[0].RunID != "r1" {
			t.Fatalf("outcomes = %+v", res.Outcomes)
		}
		res = claimCutoff(t, m, now, cutoff, 1, 5, PreferReady) // only e1 left
		if res.Outcomes[0].RunID != "e1" || res.Outcomes[0].Disposition != OutcomeExpiredRecovery {
			t.Fatalf("outcomes = %+v", res.Outcomes)
		}
		e1 := mustRun(t, m, "e1")
		if !e1.Admitted || !e1.AdmittedAt.Equal(at(1)) || !e1.ClaimedAt.Equal(now) || e1.Attempts != 2 {
			t.Fatalf("stolen run = %+v", e1)
		}
	})
	t.Run("admitted before queued dominates preference", func(t *testing.T) {
		m := preferenceSetup(t)
		insert(t, m, "a", "q1", at(0))
		// Signal r1: its marker is cleared, so a holds the queued q1 and r1
		// and the admitted expired e1.
		if err := m.Signal("r1", at(4)); err != nil {
			t.Fatal(err)
		}
		res := claimCutoff(t, m, now, cutoff, 1, 5, PreferReady)
		if res.Outcomes[0].RunID != "e1" {
			t.Fatalf("outcomes = %+v, want the admitted expired row first", res.Outcomes)
		}
	})
}

func TestClaimClassReservation(t *testing.T) {
	now, cutoff := at(100), at(50)
	// b (position 1) holds an expired admitted claim; a (position 2) has
	// three ready rows.
	setup := func(t *testing.T) *Model {
		m := newTestModel(t, 10)
		insert(t, m, "b", "e1", at(0))
		claim(t, m, at(1), 1, 5, PreferNone)
		for i := 1; i <= 3; i++ {
			insert(t, m, "a", "r"+string(rune('0'+i)), at(1+i))
		}
		return m
	}
	t.Run("carries across partitions", func(t *testing.T) {
		m := setup(t)
		res := claimCutoff(t, m, now, cutoff, 2, 5, PreferNone)
		if diff := cmp.Diff([]string{"r1", "e1"}, runIDs(res.Outcomes)); diff != "" {
			t.Fatalf("outcomes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]int64{2, 1}, positions(res.Inspections)); diff != "" {
			t.Fatalf("positions (-want +got):\n%s", diff)
		}
	})
	t.Run("empty class counts as served", func(t *testing.T) {
		m := setup(t)
		res := claimCutoff(t, m, now, at(0), 2, 5, PreferNone) // nothing expired
		if diff := cmp.Diff([]string{"r1", "r2"}, runIDs(res.Outcomes)); diff != "" {
			t.Fatalf("outcomes (-want +got):\n%s", diff)
		}
		if len(res.Inspections) != 1 {
			t.Fatalf("inspections = %d, want 1", len(res.Inspections))
		}
	})
	t.Run("both heads in one partition", func(t *testing.T) {
		m := newTestModel(t, 10)
		insert(t, m, "a", "e1", at(0))
		claim(t, m, at(1), 1, 5, PreferNone)
		insert(t, m, "a", "r1", at(2))
		insert(t, m, "a", "r2", at(3))
		res := claimCutoff(t, m, now, cutoff, 2, 5, PreferNone)
		got := runIDs(res.Outcomes)
		slices.Sort(got)
		if diff := cmp.Diff([]string{"e1", "r1"}, got); diff != "" {
			t.Fatalf("outcomes (-want +got):\n%s", diff)
		}
	})
	t.Run("last slot skips the served class", func(t *testing.T) {
		m := newTestModel(t, 10)
		insert(t, m, "c", "e1", at(0)) // position 1
		claim(t, m, at(1), 1, 5, PreferNone)
		insert(t, m, "a", "a1", at(2)) // position 2
		insert(t, m, "a", "a2", at(3))
		insert(t, m, "b", "b1", at(2)) // position 3
		insert(t, m, "b", "b2", at(3))
		res := claimCutoff(t, m, now, cutoff, 3, 5, PreferNone)
		if diff := cmp.Diff([]string{"a1", "a2", "e1"}, runIDs(res.Outcomes)); diff != "" {
			t.Fatalf("outcomes (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]Disposition{DispGrant, DispDenied, DispGrant}, dispositions(res.Inspections)); diff != "" {
			t.Fatalf("dispositions (-want +got):\n%s", diff)
		}
	})
}

func TestClaimInvalidArguments(t *testing.T) {
	m := newTestModel(t, 1)
	now := at(10)
	for name, call := range map[string]func() error{
		"demand":      func() error { _, err := m.Claim(now, now, 0, 1, PreferNone); return err },
		"attempts":    func() error { _, err := m.Claim(now, now, 1, 0, PreferNone); return err },
		"cutoff":      func() error { _, err := m.Claim(now, now.Add(time.Second), 1, 1, PreferNone); return err },
		"preference":  func() error { _, err := m.Claim(now, now, 1, 1, "soon"); return err },
		"legacy pref": func() error { _, err := m.ClaimLegacy(now, now, 1, 1, "soon"); return err },
	} {
		if err := call(); !isErr(err, ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
}

func TestClaimLegacyOldestFirst(t *testing.T) {
	m := newTestModel(t, 1)
	insert(t, m, "a", "a1", at(1))
	insert(t, m, "a", "a2", at(2))
	insert(t, m, "b", "b1", at(3))
	res, err := m.ClaimLegacy(at(10), at(0), 3, 5, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a1", "a2", "b1"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("outcomes (-want +got):\n%s", diff)
	}
	for _, o := range res.Outcomes {
		if r := mustRun(t, m, o.RunID); r.Admitted || o.Class != ClassQueuedReady || o.Disposition != "" {
			t.Fatalf("legacy outcome %+v run %+v", o, r)
		}
	}
	if len(res.Inspections) != 0 || m.Cursor() != 0 {
		t.Fatal("legacy touched the ring")
	}
}

func TestSeparationFigure(t *testing.T) {
	for _, n := range []int{2, 5, 50} {
		res, err := Separation(n)
		if err != nil {
			t.Fatalf("Separation(%d): %v", n, err)
		}
		if res.LegacyBypass != n || res.TenantFairBypass != 1 || res.TenantFairGrants != 1 {
			t.Fatalf("Separation(%d) = legacy %d, tenant fair %d (%d grants)", n, res.LegacyBypass, res.TenantFairBypass, res.TenantFairGrants)
		}
		obs, err := Check(res.TenantFairEvents, res.Window)
		if err != nil {
			t.Fatalf("Separation(%d) trace: %v", n, err)
		}
		if !obs.TargetGranted || obs.CompetingGrants != 1 || obs.CompetingOutcomes != 1 || obs.QualifyingCalls != 2 {
			t.Fatalf("Separation(%d) observed %+v", n, obs)
		}
	}
	if _, err := Separation(1); !isErr(err, ErrInvalidArgument) {
		t.Fatalf("Separation(1) err = %v", err)
	}
}

func TestClaimLegacyCallCeiling(t *testing.T) {
	m := newTestModel(t, 1)
	for i := range 300 {
		insert(t, m, "a", fmt.Sprintf("r%03d", i), at(i))
	}
	res, err := m.ClaimLegacy(at(1000), at(0), 1000, 5, PreferNone)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Outcomes) != DefaultS*DefaultQ || res.Outcomes[255].RunID != "r255" || res.Outcomes[255].Ordinal != 256 {
		t.Fatalf("legacy call returned %d outcomes", len(res.Outcomes))
	}
}

func TestClaimLegacyReservationAndPreference(t *testing.T) {
	setup := func(t *testing.T) *Model {
		m := newTestModel(t, 10)
		insert(t, m, "a", "e1", at(5))
		if _, err := m.ClaimLegacy(at(6), at(0), 1, 5, PreferNone); err != nil {
			t.Fatal(err)
		}
		insert(t, m, "b", "r1", at(1))
		insert(t, m, "b", "r2", at(2))
		return m
	}
	now, cutoff := at(100), at(50)
	tests := []struct {
		demand int
		pref   Preference
		want   []string
	}{
		{1, PreferNone, []string{"r1"}},
		{1, PreferExpired, []string{"e1"}},
		{2, PreferNone, []string{"r1", "e1"}},
		{3, PreferNone, []string{"r1", "e1", "r2"}},
	}
	for _, tc := range tests {
		m := setup(t)
		res, err := m.ClaimLegacy(now, cutoff, tc.demand, 5, tc.pref)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, runIDs(res.Outcomes)); diff != "" {
			t.Errorf("demand %d pref %q (-want +got):\n%s", tc.demand, tc.pref, diff)
		}
		if r := mustRun(t, m, "e1"); r.Admitted {
			t.Error("legacy wrote a marker")
		}
	}
}
