package oracle

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// parkedAsleep lists the positions of ring whose partitions the model has
// parked.
func parkedAsleep(m *Model, ring map[int64]string) []int64 {
	var out []int64
	for _, p := range m.Partitions() {
		if _, in := ring[p.Position]; in && p.Parked {
			out = append(out, p.Position)
		}
	}
	return out
}

// TestCheckMechanicsParkedAcceptsModelTraces: parked-mode calls of the model
// (parks, sweeps, wakes by write, an awake ring that empties within a call)
// pass the parked-mode mechanics check with the parks known before each call.
func TestCheckMechanicsParkedAcceptsModelTraces(t *testing.T) {
	m := newTestModel(t, 2)
	for i := range 40 {
		scope := fmt.Sprintf("t%02d", i)
		switch i % 4 {
		case 0:
			insert(t, m, scope, scope+"-due", at(-60))
			insert(t, m, scope, scope+"-due2", at(-50))
		default:
			insert(t, m, scope, scope+"-later", at(600*i))
		}
	}
	walkParkedUnparked(m) // the walk parks: these are its traces
	now := at(0)
	parks, woken := 0, 0
	for call := range 30 {
		if call == 10 {
			insert(t, m, "t01", "t01-due", at(-10)) // a write wakes t01 before its timer
			if err := m.MutateRun("t01-due", StatusRunning, now, now); err != nil {
				t.Fatal(err)
			}
		}
		ring := m.Ring()
		asleep := parkedAsleep(m, ring)
		res, err := m.Claim(now, now.Add(-time.Hour), 1+call%3, 10, PreferNone)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range res.Inspections {
			if in.Parked {
				parks++
			}
		}
		if len(res.Inspections) > 0 {
			woken += res.Inspections[0].Woken
		}
		if len(ring) > 0 && len(res.Inspections) > 0 {
			b := m.Budgets()
			if _, err := CheckMechanicsParked(res.Events(fmt.Sprint(call)), ring, asleep, b.S, b.Q); err != nil {
				t.Fatalf("call %d: %v\ninspections %+v", call, err, res.Inspections)
			}
		}
		now = now.Add(20 * time.Minute)
	}
	if parks != 24 || woken != 24 {
		t.Fatalf("%d parks and %d wakes by time, want the 24 and 24 this scenario makes", parks, woken)
	}
}

func TestCheckMechanicsParkedRefusesBrokenWalks(t *testing.T) {
	ring := map[int64]string{1: "a", 2: "b", 3: "c"}
	ev := func(visit int, before, pos int64, d Disposition, parked bool) Event {
		outcomes, epoch := 0, int64(0)
		if d == DispGrant {
			outcomes, epoch = 1, 1
		}
		return Event{Call: "c", Visit: visit, Demand: 1, CursorBefore: before, CursorAfter: pos,
			Scope: ring[pos], Position: pos, Disposition: d, Outcomes: outcomes, EpochDelta: epoch, Parked: parked}
	}
	// b is parked at the start; a parks, c grants.
	ok := []Event{ev(1, 0, 1, DispEmptyPage, true), ev(2, 1, 3, DispGrant, false)}
	if _, err := CheckMechanicsParked(ok, ring, []int64{2}, 32, 8); err != nil {
		t.Fatalf("valid parked walk: %v", err)
	}
	// Every position parked within the call: an early stop is allowed.
	emptied := []Event{ev(1, 0, 1, DispEmptyPage, true), ev(2, 1, 3, DispEmptyPage, true)}
	if _, err := CheckMechanicsParked(emptied, ring, []int64{2}, 32, 8); err != nil {
		t.Fatalf("walk that parks the whole ring: %v", err)
	}
	for name, tc := range map[string]struct {
		events []Event
		asleep []int64
		want   Invariant
	}{
		"passes over an awake position": {[]Event{ev(1, 0, 3, DispGrant, false)}, []int64{1}, InvContiguousCursor},
		"a grant that parks":            {[]Event{ev(1, 0, 1, DispGrant, true)}, nil, InvGrantUnit},
		"an early stop with b awake":    {[]Event{ev(1, 0, 1, DispEmptyPage, true)}, []int64{3}, InvStopOrExhaust},
	} {
		_, err := CheckMechanicsParked(tc.events, ring, tc.asleep, 32, 8)
		var v *Violation
		if !errors.As(err, &v) || v.Invariant != tc.want {
			t.Errorf("%s: err = %v, want a violation of %s", name, err, tc.want)
		}
	}
	// Outside parked mode a park is itself a violation.
	if _, err := CheckMechanics([]Event{ev(1, 0, 1, DispEmptyPage, true), ev(2, 1, 2, DispGrant, false)}, ring, 32, 8); err == nil {
		t.Fatal("a park in a spec-mode trace passed")
	}
}
