package oracle

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// visit is one crafted inspection: disposition and outcome count.
type visit struct {
	d Disposition
	n int
}

// grant returns a granting visit with n outcomes.
func grant(n int) visit { return visit{DispGrant, n} }

// fail is an unsuccessful visit.
var fail = visit{DispEmptyPage, 0}

// fails returns k unsuccessful visits.
func fails(k int) []visit {
	out := make([]visit, k)
	for i := range out {
		out[i] = fail
	}
	return out
}

// traceBuilder crafts contiguous traces over a fixed ring.
type traceBuilder struct {
	ring   map[int64]string
	sorted []int64
	cursor int64
	calls  int
	events []Event
}

func newTrace(ring map[int64]string, cursor int64) *traceBuilder {
	return &traceBuilder{ring: ring, sorted: slices.Sorted(maps.Keys(ring)), cursor: cursor}
}

// call appends one contiguous call with the given demand and visits.
func (b *traceBuilder) call(demand int, vs ...visit) *traceBuilder {
	b.calls++
	id := fmt.Sprintf("c%d", b.calls)
	for i, v := range vs {
		pos := nextPosition(b.sorted, b.cursor)
		e := Event{Call: id, Visit: i + 1, Demand: demand, CursorBefore: b.cursor, CursorAfter: pos,
			Scope: b.ring[pos], Position: pos, Disposition: v.d, Outcomes: v.n}
		if v.d == DispGrant {
			e.EpochDelta = 1
		}
		b.cursor = pos
		b.events = append(b.events, e)
	}
	return b
}

// cat concatenates visit lists.
func cat(parts ...[]visit) []visit { return slices.Concat(parts...) }

// wantViolation asserts err is a *Violation of inv at event index at.
func wantViolation(t *testing.T, err error, inv Invariant, at int) {
	t.Helper()
	var v *Violation
	if !errors.As(err, &v) {
		t.Fatalf("err = %v, want *Violation of %s", err, inv)
	}
	if !errors.Is(err, ErrViolation) {
		t.Fatalf("errors.Is(err, ErrViolation) = false for %v", err)
	}
	if v.Invariant != inv || v.Event != at {
		t.Fatalf("violation = %v, want invariant %s at event %d", v, inv, at)
	}
}

// sparse is C = {3: a, 17: b, 40: t}.
var sparse = map[int64]string{3: "a", 17: "b", 40: "t"}

func sparseWindow(S, Q, L int) Window {
	return Window{Target: "t", Cohort: []string{"a", "b", "t"}, Ring: sparse, S: S, Q: Q, L: L}
}

func TestCheckAtEveryBound(t *testing.T) {
	// S = 1 makes every inspection its own call: a b t(fail) a b t(grant)
	// reaches all three bounds for A = H = 3, Q = 8, L = 1 exactly.
	b := newTrace(sparse, 40).
		call(8, grant(8)).call(8, grant(8)).call(1, fail).
		call(8, grant(8)).call(8, grant(8)).call(1, grant(1))
	w := sparseWindow(1, 8, 1)
	obs, err := Check(b.events, w)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	want := BoundSet{CompetingGrants: 4, CompetingOutcomes: 32, QualifyingCalls: 6}
	if obs.Bounds != want {
		t.Fatalf("bounds = %+v, want %+v", obs.Bounds, want)
	}
	if obs.CompetingGrants != 4 || obs.CompetingOutcomes != 32 || obs.QualifyingCalls != 6 {
		t.Fatalf("observed = %+v, want every count at its bound", obs)
	}
	if !obs.TargetGranted || obs.TargetGrantEvent != 5 || obs.MaxConsecutiveFailedTarget != 1 ||
		obs.TargetInspections != 2 || obs.MaxCompetitorGrantsPerRound != 1 {
		t.Fatalf("observed = %+v", obs)
	}
	if !slices.Equal(obs.GrantingCohort, []string{"a", "b", "t"}) || obs.CompetitorGrants["a"] != 2 || obs.CompetitorGrants["b"] != 2 {
		t.Fatalf("cohort = %v, grants = %v", obs.GrantingCohort, obs.CompetitorGrants)
	}
}

func TestCheckAtBoundProductionBudgets(t *testing.T) {
	// H = 40 (38 dormant positions), A = 2, L = 0: calls <= 1 + ceil(39/32) = 3.
	ring := map[int64]string{}
	for p := int64(1); p <= 40; p++ {
		ring[p] = fmt.Sprintf("d%d", p)
	}
	ring[1], ring[40] = "c", "t"
	b := newTrace(ring, 40).
		call(8, grant(8)).                           // c fills the call
		call(1, fails(32)...).                       // 2..33 dormant: S inspections
		call(1, cat(fails(6), []visit{grant(1)})...) // 34..39 dormant, t grants
	w := Window{Target: "t", Cohort: []string{"c", "t"}, Ring: ring, S: 32, Q: 8, L: 0}
	obs, err := Check(b.events, w)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if obs.QualifyingCalls != 3 || obs.Bounds.QualifyingCalls != 3 || obs.CompetingGrants != 1 || obs.CompetingOutcomes != 8 {
		t.Fatalf("observed = %+v", obs)
	}
}

func TestCheckSparseRepeatedWrap(t *testing.T) {
	// H = 3 < S = 32: one unfilled call visits each position ~11 times.
	b := newTrace(sparse, 0).call(5, fails(32)...)
	if _, err := CheckMechanics(b.events, sparse, 32, 8); err != nil {
		t.Fatalf("CheckMechanics: %v", err)
	}
	visits := map[int64]int{}
	for _, e := range b.events {
		visits[e.Position]++
	}
	if visits[3] != 11 || visits[17] != 11 || visits[40] != 10 {
		t.Fatalf("visits per position = %v", visits)
	}
	// A window over the same ring: a grants, t fails once, b grants, the
	// call wraps and t grants on its second inspection.
	w := sparseWindow(32, 8, 1)
	tr := newTrace(sparse, 0).call(4, grant(1), grant(1), visit{DispCapDebtDenial, 0}, fail, fail, grant(2))
	// visits: 3(a) 17(b) 40(t fail) 3(a fail) 17(b fail) 40(t grant)
	obs, err := Check(tr.events, w)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !obs.TargetGranted || obs.QualifyingCalls != 1 || obs.CompetingGrants != 2 || obs.MaxConsecutiveFailedTarget != 1 {
		t.Fatalf("observed = %+v", obs)
	}
}

func TestCheckEventsAfterTargetGrant(t *testing.T) {
	// The target-grant call continues; later calls are only checked
	// mechanically.
	b := newTrace(sparse, 17).call(3, grant(1), grant(1), grant(1)).call(1, grant(1))
	obs, err := Check(b.events, sparseWindow(32, 8, 0))
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if obs.QualifyingCalls != 1 || obs.CompetingGrants != 0 || obs.Grants != 4 || obs.Calls != 2 {
		t.Fatalf("observed = %+v", obs)
	}
}

func TestCheckPendingWindow(t *testing.T) {
	b := newTrace(sparse, 40).call(1, grant(1))
	obs, err := Check(b.events, sparseWindow(32, 8, 0))
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if obs.TargetGranted || obs.TargetGrantEvent != -1 {
		t.Fatalf("observed = %+v, want pending", obs)
	}
}

func TestCheckRejections(t *testing.T) {
	w := sparseWindow(32, 8, 0)
	tests := []struct {
		name   string
		events func() []Event
		inv    Invariant
		at     int
	}{
		{"unsuccessful inspection with outcomes", func() []Event {
			ev := newTrace(sparse, 17).call(1, grant(1)).events
			ev[0].Disposition = DispDenied
			return ev
		}, InvGrantUnit, 0},
		{"unsuccessful inspection with epoch delta", func() []Event {
			ev := newTrace(sparse, 17).call(1, cat(fails(31), []visit{grant(1)})...).events
			ev[0].EpochDelta = 1
			return ev
		}, InvGrantUnit, 0},
		{"grant with zero outcomes", func() []Event {
			return newTrace(sparse, 17).call(1, grant(0)).events
		}, InvGrantUnit, 0},
		{"grant with more than Q outcomes", func() []Event {
			return newTrace(sparse, 17).call(9, grant(9)).events
		}, InvGrantUnit, 0},
		{"grant without epoch", func() []Event {
			ev := newTrace(sparse, 17).call(1, grant(1)).events
			ev[0].EpochDelta = 0
			return ev
		}, InvGrantUnit, 0},
		{"grant with double epoch", func() []Event {
			ev := newTrace(sparse, 17).call(1, grant(1)).events
			ev[0].EpochDelta = 2
			return ev
		}, InvGrantUnit, 0},
		{"skipped position", func() []Event {
			ev := newTrace(sparse, 0).call(1, fail, grant(1)).events
			ev[1].Position, ev[1].CursorAfter, ev[1].Scope = 40, 40, "t" // skips 17
			return ev
		}, InvContiguousCursor, 1},
		{"repeated position", func() []Event {
			ev := newTrace(sparse, 0).call(1, fail, grant(1)).events
			ev[1].Position, ev[1].CursorAfter, ev[1].Scope = 3, 3, "a"
			return ev
		}, InvContiguousCursor, 1},
		{"position outside C", func() []Event {
			ev := newTrace(sparse, 0).call(1, grant(1)).events
			ev[0].Position, ev[0].CursorAfter = 4, 4
			return ev
		}, InvContiguousCursor, 0},
		{"cursor after is not the position", func() []Event {
			ev := newTrace(sparse, 0).call(1, grant(1)).events
			ev[0].CursorAfter = 17
			return ev
		}, InvContiguousCursor, 0},
		{"cursor moved between visits", func() []Event {
			ev := newTrace(sparse, 0).call(1, fail, grant(1)).events
			ev[1].CursorBefore = 40
			return ev
		}, InvContiguousCursor, 1},
		{"visit ordinal gap", func() []Event {
			ev := newTrace(sparse, 0).call(1, fail, grant(1)).events
			ev[1].Visit = 3
			return ev
		}, InvContiguousCursor, 1},
		{"cross-call discontinuity", func() []Event {
			ev := newTrace(sparse, 0).call(1, grant(1)).call(1, grant(1)).events
			// The second call claims to start at 17 although the first left 3.
			ev[1].CursorBefore, ev[1].Position, ev[1].CursorAfter, ev[1].Scope = 17, 40, 40, "t"
			return ev
		}, InvSerializedCursor, 1},
		{"interleaved calls", func() []Event {
			ev := newTrace(sparse, 17).call(1, grant(1)).call(1, grant(1)).call(1, grant(1)).events
			ev[2].Call = ev[0].Call
			return ev
		}, InvSerializedCursor, 2},
		{"unfilled call stops before S", func() []Event {
			return newTrace(sparse, 0).call(1, fail, fail).events
		}, InvStopOrExhaust, 1},
		{"early stop without filled demand", func() []Event {
			return newTrace(sparse, 0).call(3, grant(1), grant(1)).events
		}, InvStopOrExhaust, 1},
		{"inspection after filled demand", func() []Event {
			return newTrace(sparse, 17).call(1, grant(1), fail).events
		}, InvStopOrExhaust, 1},
		{"more than S inspections", func() []Event {
			return newTrace(sparse, 40).call(1, cat(fails(32), []visit{grant(1)})...).events
		}, InvStopOrExhaust, 32},
		{"outcomes beyond demand", func() []Event {
			return newTrace(sparse, 17).call(2, grant(3)).events
		}, InvStopOrExhaust, 0},
		{"more than L consecutive failed target inspections", func() []Event {
			return newTrace(sparse, 17).call(1, cat(fails(32))...).events
		}, InvTargetFailures, 0},
		{"grant outside P", func() []Event {
			return newTrace(map[int64]string{3: "a", 17: "b", 20: "x", 40: "t"}, 40).
				call(1, grant(1)).call(1, grant(1)).call(1, grant(1)).events
		}, InvCohort, 2},
		{"unknown disposition", func() []Event {
			ev := newTrace(sparse, 17).call(1, grant(1)).events
			ev[0].Disposition = "granted"
			return ev
		}, InvEventShape, 0},
		{"scope does not match position", func() []Event {
			ev := newTrace(sparse, 17).call(1, grant(1)).events
			ev[0].Scope = "a"
			return ev
		}, InvEventShape, 0},
		{"demand changes within a call", func() []Event {
			ev := newTrace(sparse, 0).call(2, grant(1), grant(1)).events
			ev[1].Demand = 3
			return ev
		}, InvEventShape, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ww := w
			if tc.inv == InvCohort {
				ww.Ring = map[int64]string{3: "a", 17: "b", 20: "x", 40: "t"}
			}
			if tc.inv == InvStopOrExhaust {
				ww.L = 32 // failed target visits are not the point here
			}
			_, err := Check(tc.events(), ww)
			wantViolation(t, err, tc.inv, tc.at)
		})
	}
}

func TestCheckCompetitorTwice(t *testing.T) {
	t.Run("before the first target inspection", func(t *testing.T) {
		ev := newTrace(sparse, 40).call(1, grant(1)).call(1, grant(1)).events
		// The second call revisits a instead of moving on to b.
		ev[1].Position, ev[1].CursorAfter, ev[1].Scope = 3, 3, "a"
		_, err := Check(ev, sparseWindow(32, 8, 1))
		wantViolation(t, err, InvCompetitorOnce, 1)
	})
	t.Run("between consecutive target inspections", func(t *testing.T) {
		ev := newTrace(sparse, 17).call(2, fail, grant(1), grant(1)).events
		// t fails, a grants, then a grants again instead of b.
		ev[2].Position, ev[2].CursorAfter, ev[2].Scope = 3, 3, "a"
		_, err := Check(ev, sparseWindow(32, 8, 1))
		wantViolation(t, err, InvCompetitorOnce, 2)
	})
}

func TestCheckBoundSafetyNet(t *testing.T) {
	// The bounds follow from the other rules, so exercise their checks with
	// artificially lowered bounds on a valid trace.
	ev := newTrace(sparse, 40).call(8, grant(8)).call(8, grant(8)).call(1, grant(1)).events
	tests := []struct {
		name   string
		bounds BoundSet
		inv    Invariant
		at     int
	}{
		{"grants", BoundSet{CompetingGrants: 1, CompetingOutcomes: 100, QualifyingCalls: 100}, InvBoundGrants, 1},
		{"outcomes", BoundSet{CompetingGrants: 100, CompetingOutcomes: 12, QualifyingCalls: 100}, InvBoundOutcomes, 1},
		{"calls", BoundSet{CompetingGrants: 100, CompetingOutcomes: 100, QualifyingCalls: 2}, InvBoundCalls, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newChecker(ev, sparse, 32, 8)
			if err != nil {
				t.Fatal(err)
			}
			c.windowed, c.target, c.l = true, "t", 0
			c.cohort = map[string]bool{"a": true, "b": true, "t": true}
			c.obs.Bounds = tc.bounds
			_, err = c.run()
			wantViolation(t, err, tc.inv, tc.at)
		})
	}
}

func TestCheckInvalidWindow(t *testing.T) {
	ev := newTrace(sparse, 17).call(1, grant(1)).events
	tests := []struct {
		name string
		w    Window
	}{
		{"empty ring", Window{Target: "t", Cohort: []string{"t"}, S: 32, Q: 8}},
		{"non-positive position", Window{Target: "t", Cohort: []string{"t"}, Ring: map[int64]string{0: "t"}, S: 32, Q: 8}},
		{"duplicate scope", Window{Target: "t", Cohort: []string{"t"}, Ring: map[int64]string{1: "t", 2: "t"}, S: 32, Q: 8}},
		{"target not in ring", Window{Target: "z", Cohort: []string{"z"}, Ring: sparse, S: 32, Q: 8}},
		{"cohort without target", Window{Target: "t", Cohort: []string{"a"}, Ring: sparse, S: 32, Q: 8}},
		{"cohort outside ring", Window{Target: "t", Cohort: []string{"t", "z"}, Ring: sparse, S: 32, Q: 8}},
		{"S zero", Window{Target: "t", Cohort: []string{"t"}, Ring: sparse, S: 0, Q: 8}},
		{"Q zero", Window{Target: "t", Cohort: []string{"t"}, Ring: sparse, S: 32, Q: 0}},
		{"L negative", Window{Target: "t", Cohort: []string{"t"}, Ring: sparse, S: 32, Q: 8, L: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(ev, tc.w)
			var we *WindowError
			if !errors.Is(err, ErrInvalidWindow) || !errors.As(err, &we) {
				t.Fatalf("err = %v, want *WindowError", err)
			}
		})
	}
}

func TestCheckTenantlessTarget(t *testing.T) {
	ring := map[int64]string{1: "", 2: "x"}
	ev := newTrace(ring, 2).call(1, grant(1)).events
	obs, err := Check(ev, Window{Target: "", Cohort: []string{""}, Ring: ring, S: 32, Q: 8})
	if err != nil || !obs.TargetGranted {
		t.Fatalf("Check = %+v, %v", obs, err)
	}
}
