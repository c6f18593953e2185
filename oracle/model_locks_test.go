package oracle

import (
	"slices"
	"testing"
	"time"
)

// lockedHeadModel has partition a with two expired admitted claims (e1
// older by id than e2) and one admitted-ready row r1, and returns the claim
// time at which e1 and e2 are expired.
func lockedHeadModel(t *testing.T) (*Model, map[string]Outcome, time.Time) {
	t.Helper()
	m := newTestModel(t, 10)
	insert(t, m, "a", "e1", at(0))
	insert(t, m, "a", "e2", at(1))
	insert(t, m, "a", "r1", at(2))
	leases := map[string]Outcome{}
	for _, o := range claim(t, m, at(3), 3, 5, PreferNone).Outcomes {
		leases[o.RunID] = o
	}
	release(t, m, leases["r1"], at(4))
	return m, leases, at(4).Add(2 * time.Hour)
}

func TestHoldRowLockHeadHandsItsPlaceToTheNextRow(t *testing.T) {
	m, _, now := lockedHeadModel(t)
	if err := m.HoldRowLock("e1"); err != nil {
		t.Fatalf("HoldRowLock: %v", err)
	}
	res := claim(t, m, now, 1, 5, PreferExpired)
	if got := runIDs(res.Outcomes); !slices.Equal(got, []string{"e2"}) {
		t.Fatalf("outcomes = %v, want [e2]", got)
	}
	if got := dispositions(res.Inspections); !slices.Equal(got, []Disposition{DispGrant}) {
		t.Fatalf("dispositions = %v, want [grant]", got)
	}
}

func TestHoldRowLockReleasedRowIsTakenAgain(t *testing.T) {
	m, _, now := lockedHeadModel(t)
	if err := m.HoldRowLock("e1"); err != nil {
		t.Fatalf("HoldRowLock: %v", err)
	}
	m.ReleaseRowLocks()
	res := claim(t, m, now, 1, 5, PreferExpired)
	if got := runIDs(res.Outcomes); !slices.Equal(got, []string{"e1"}) {
		t.Fatalf("outcomes = %v, want [e1]", got)
	}
}

func TestHoldRowLockQueuedHeadIsLockMiss(t *testing.T) {
	for _, demand := range []int{1, 3} {
		m := newTestModel(t, 10)
		insert(t, m, "a", "q1", at(0))
		insert(t, m, "a", "q2", at(1))
		insert(t, m, "a", "q3", at(2))
		if err := m.HoldRowLock("q1"); err != nil {
			t.Fatalf("HoldRowLock: %v", err)
		}
		res := claim(t, m, at(3), demand, 5, PreferNone)
		if len(res.Outcomes) != 0 {
			t.Fatalf("demand %d: outcomes = %v, want none", demand, runIDs(res.Outcomes))
		}
		want := slices.Repeat([]Disposition{DispLockMiss}, m.Budgets().S)
		if got := dispositions(res.Inspections); !slices.Equal(got, want) {
			t.Fatalf("demand %d: dispositions = %v, want %d lock_miss", demand, got, len(want))
		}
	}
}

func TestHoldRowLockUnknownRun(t *testing.T) {
	m := newTestModel(t, 10)
	if err := m.HoldRowLock("nope"); !isErr(err, ErrNotFound) {
		t.Fatalf("HoldRowLock(nope) = %v, want ErrNotFound", err)
	}
}
