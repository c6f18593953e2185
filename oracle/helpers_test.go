package oracle

import (
	"errors"
	"testing"
	"time"
)

// t0 is the fixed base time of the model tests.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns t0 plus sec seconds.
func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// newTestModel returns a model with the default budgets and cap.
func newTestModel(t testing.TB, defaultCap int) *Model {
	t.Helper()
	m, err := NewModel(defaultCap)
	if err != nil {
		t.Fatalf("NewModel: %v", err)
	}
	return m
}

// insert inserts runs or fails the test.
func insert(t testing.TB, m *Model, scope, runID string, wake time.Time) {
	t.Helper()
	if err := m.InsertRun(scope, runID, wake); err != nil {
		t.Fatalf("InsertRun(%q, %q): %v", scope, runID, err)
	}
}

// claim runs a TenantFair claim with cutoff = now - 1h, or fails the test.
// Every call's trace must pass CheckMechanics over the ring at call time.
func claim(t testing.TB, m *Model, now time.Time, demand, maxAttempts int, pref Preference) ClaimResult {
	t.Helper()
	return claimCutoff(t, m, now, now.Add(-time.Hour), demand, maxAttempts, pref)
}

// claimCutoff is claim with an explicit cutoff.
func claimCutoff(t testing.TB, m *Model, now, cutoff time.Time, demand, maxAttempts int, pref Preference) ClaimResult {
	t.Helper()
	ring := m.Ring()
	res, err := m.Claim(now, cutoff, demand, maxAttempts, pref)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if len(ring) > 0 {
		b := m.Budgets()
		if _, err := CheckMechanics(res.Events("call"), ring, b.S, b.Q); err != nil {
			t.Fatalf("model trace fails CheckMechanics: %v", err)
		}
	}
	return res
}

// runIDs lists the run ids of outcomes in order.
func runIDs(outs []Outcome) []string {
	ids := make([]string, len(outs))
	for i, o := range outs {
		ids[i] = o.RunID
	}
	return ids
}

// dispositions lists inspection dispositions in order.
func dispositions(ins []Inspection) []Disposition {
	out := make([]Disposition, len(ins))
	for i, in := range ins {
		out[i] = in.Disposition
	}
	return out
}

// positions lists visited positions in order.
func positions(ins []Inspection) []int64 {
	out := make([]int64, len(ins))
	for i, in := range ins {
		out[i] = in.Position
	}
	return out
}

// mustRun returns a run snapshot or fails the test.
func mustRun(t testing.TB, m *Model, runID string) Run {
	t.Helper()
	r, ok := m.Run(runID)
	if !ok {
		t.Fatalf("run %q not found", runID)
	}
	return r
}

// finish commits a claimed run as done.
func finish(t testing.TB, m *Model, o Outcome, now time.Time) {
	t.Helper()
	if err := m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseTerminal, Status: StatusDone}, now); err != nil {
		t.Fatalf("Commit(%s): %v", o.RunID, err)
	}
}

// release releases a claimed run immediately.
func release(t testing.TB, m *Model, o Outcome, now time.Time) {
	t.Helper()
	if ok, err := m.ReleaseClaim(o.RunID, o.Token, now); err != nil || !ok {
		t.Fatalf("ReleaseClaim(%s) = %v, %v", o.RunID, ok, err)
	}
}

// isErr is errors.Is.
func isErr(err, target error) bool { return errors.Is(err, target) }
