package oracle

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A paused partition is visited in ring order and refused; its claimed run
// still commits; after the resume its queued runs are promoted in FIFO order.
func TestClaimPausedPartitionIsVisitedAndRefused(t *testing.T) {
	m := newTestModel(t, 10)
	insert(t, m, "a", "a1", at(0))
	insert(t, m, "a", "a2", at(1))
	insert(t, m, "a", "a3", at(2))
	insert(t, m, "b", "b1", at(0))
	now := at(10)
	first := claim(t, m, now, 1, 5, PreferNone)
	if diff := cmp.Diff([]string{"a1"}, runIDs(first.Outcomes)); diff != "" {
		t.Fatalf("first call (-want +got):\n%s", diff)
	}
	m.Pause("a")
	res := claim(t, m, now, 3, 5, PreferNone)
	if diff := cmp.Diff([]string{"b1"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("outcomes while paused (-want +got):\n%s", diff)
	}
	want := []Disposition{DispGrant, DispPaused}
	for range (DefaultS - 2) / 2 {
		want = append(want, DispEmptyPage, DispPaused)
	}
	if diff := cmp.Diff(want, dispositions(res.Inspections)); diff != "" {
		t.Fatalf("dispositions (-want +got):\n%s", diff)
	}
	finish(t, m, first.Outcomes[0], now)
	m.Resume("a")
	res = claim(t, m, now, 2, 5, PreferNone)
	if diff := cmp.Diff([]string{"a2", "a3"}, runIDs(res.Outcomes)); diff != "" {
		t.Fatalf("outcomes after resume (-want +got):\n%s", diff)
	}
}

// The checker refuses a paused target and a paused scope that is not refused.
func TestCheckPausedWindow(t *testing.T) {
	ring := map[int64]string{1: "a", 2: "b"}
	events := []Event{
		{Call: "c1", Visit: 1, Demand: 1, CursorBefore: 0, CursorAfter: 1, Scope: "a", Position: 1, Disposition: DispPaused},
		{Call: "c1", Visit: 2, Demand: 1, CursorBefore: 1, CursorAfter: 2, Scope: "b", Position: 2, Disposition: DispGrant, Outcomes: 1, EpochDelta: 1},
	}
	w := Window{Target: "b", Cohort: []string{"b"}, Ring: ring, S: 32, Q: 8, L: 1, Paused: []string{"a"}}
	obs, err := Check(events, w)
	if err != nil || !obs.TargetGranted {
		t.Fatalf("Check = %+v, %v; want the target granted", obs, err)
	}
	w.Target, w.Cohort = "a", []string{"a"}
	var we *WindowError
	if _, err := Check(events, w); !errors.As(err, &we) || we.Field != "Paused" {
		t.Fatalf("paused target: %v, want a Paused WindowError", err)
	}
	w = Window{Target: "b", Cohort: []string{"b"}, Ring: ring, S: 32, Q: 8, L: 1, Paused: []string{"a"}}
	events[0].Disposition = DispEmptyPage
	var v *Violation
	if _, err := Check(events, w); !errors.As(err, &v) || v.Invariant != InvPaused || v.Event != 0 {
		t.Fatalf("unrefused paused visit: %v, want a pause violation at event 0", err)
	}
}
