package oracle

import (
	"fmt"
	"slices"
)

// Check verifies a committed trace of one eligible window; the window, the
// numbered invariants and the bounds are those of docs/claim-algorithm.md,
// "Invariants and bounds". events start at the window opening (the first
// event is visit 1 of the first qualifying call) and consist of complete
// calls in commit order; events after the target grant are allowed and are
// checked for invariants 1-3 and the unit rule only.
//
// It enforces, per event:
//   - the event shape (known disposition, scope matching its position,
//     constant demand within a call);
//   - invariant 1: calls do not interleave and each call starts at the
//     cursor the previous call left (cross-call continuity);
//   - invariant 2: visit ordinals count 1, 2, ...; each visit is at the next
//     position of C after the call-local cursor (ascending, cyclic, repeated
//     wrap allowed when H < S) and moves the cursor there;
//   - invariant 3: a call stops right after its demand is filled, never
//     exceeds its demand or S inspections, and a call that stops before S
//     inspections has filled its demand;
//   - the unit rule: a grant has 1..Q outcomes and epoch delta 1; any other
//     disposition has 0 outcomes and epoch delta 0;
//   - the pause rule: every visit of a scope in Window.Paused is refused
//     with DispPaused (a paused partition is visited, consumes one
//     inspection, and is not eligible work: it cannot be the target);
//
// and, strictly before the target's first grant:
//   - the cohort rule: no partition outside P grants;
//   - invariant 4: each competitor grants at most once before the first
//     target inspection and between consecutive target inspections;
//   - invariant 5: at most L consecutive target inspections fail;
//   - the token rule: the target is never refused for want of a token
//     (DispRateLimited), since an eligible window needs an admissible
//     target; competitors' rates only remove grants;
//   - the three bounds of Bounds(|P|, |C|, S, Q, L), competitor work counted
//     from the first event to strictly before the target grant and calls
//     counted through and including the target-grant call.
//
// When one event breaks several rules, the first reported is, in order: event
// shape, the call-boundary rules (1, 2, 3), position membership in C, the
// unit rule, the pause rule, the window rules (cohort, 4, 5, bounds) and last cursor
// contiguity (2), so that a competitor reached twice by a broken cursor is
// reported as the fairness violation it causes. The bounds follow from the
// other rules (grants and outcomes from 4, 5, the cohort and unit rules;
// calls also from 2 and 3), so on such traces they act as a safety net.
//
// A parked-mode window (Window.Parked) walks the awake ring instead of C.
// The checker knows every park (Event.Parked, and Window.Asleep at the
// opening) but not every wake (a write or the wake sweep), so invariants 2
// and 3 become: every position of C that a visit passes over is parked as
// far as the trace shows; a visit to a parked position shows that it woke;
// and a call may also stop before S inspections when every position of C is
// parked after its last visit. A park must be an empty_page or a
// rate_limited visit. The call
// bound uses H = |C|, which is no smaller than H'; with a fixed awake ring,
// pass it as C instead (and no Asleep) to check the bound with H'.
//
// A trace without a target grant is a pending window: it passes when no rule
// is broken so far and Observed.TargetGranted is false. Check returns the
// observed counts together with the first *Violation, or a *WindowError when
// the window itself is invalid.
func Check(events []Event, w Window) (Observed, error) {
	c, err := newChecker(events, w.Ring, w.S, w.Q)
	if err != nil {
		return Observed{TargetGrantEvent: -1}, err
	}
	if w.Parked {
		if err := c.parkedMode(w.Asleep); err != nil {
			return Observed{TargetGrantEvent: -1}, err
		}
	}
	if w.L < 0 {
		return Observed{TargetGrantEvent: -1}, &WindowError{Field: "L", Reason: "L must be >= 0"}
	}
	if _, ok := c.ring.posOf[w.Target]; !ok {
		return Observed{TargetGrantEvent: -1}, &WindowError{Field: "Target", Reason: fmt.Sprintf("target %q is not in the ring", w.Target)}
	}
	c.windowed = true
	c.target = w.Target
	c.l = w.L
	c.cohort = map[string]bool{}
	for _, s := range w.Cohort {
		if _, ok := c.ring.posOf[s]; !ok {
			return Observed{TargetGrantEvent: -1}, &WindowError{Field: "Cohort", Reason: fmt.Sprintf("cohort member %q is not in the ring", s)}
		}
		c.cohort[s] = true
	}
	if !c.cohort[w.Target] {
		return Observed{TargetGrantEvent: -1}, &WindowError{Field: "Cohort", Reason: "cohort must contain the target"}
	}
	c.paused = map[string]bool{}
	for _, s := range w.Paused {
		if _, ok := c.ring.posOf[s]; !ok {
			return Observed{TargetGrantEvent: -1}, &WindowError{Field: "Paused", Reason: fmt.Sprintf("paused scope %q is not in the ring", s)}
		}
		if s == w.Target {
			return Observed{TargetGrantEvent: -1}, &WindowError{Field: "Paused", Reason: "a paused target is not eligible work"}
		}
		c.paused[s] = true
	}
	b, err := Bounds(len(c.cohort), len(c.ring.sorted), w.S, w.Q, w.L)
	if err != nil {
		return Observed{TargetGrantEvent: -1}, &WindowError{Field: "Bounds", Reason: err.Error()}
	}
	c.obs.Bounds = b
	return c.run()
}

// CheckMechanics verifies the window-independent rules of a trace over a
// fixed ring: event shape, invariants 1, 2 and 3 and the unit rule (see
// Check). Use it for traces that are not one eligible window, e.g. a single
// call, with the ring that call saw.
func CheckMechanics(events []Event, ring map[int64]string, S, Q int) (Observed, error) {
	c, err := newChecker(events, ring, S, Q)
	if err != nil {
		return Observed{TargetGrantEvent: -1}, err
	}
	return c.run()
}

// CheckMechanicsParked is CheckMechanics for a parked-mode trace, with
// asleep the positions of ring parked before the first event (see Check).
func CheckMechanicsParked(events []Event, ring map[int64]string, asleep []int64, S, Q int) (Observed, error) {
	c, err := newChecker(events, ring, S, Q)
	if err == nil {
		err = c.parkedMode(asleep)
	}
	if err != nil {
		return Observed{TargetGrantEvent: -1}, err
	}
	return c.run()
}

// checker is the state of one pass over a trace.
type checker struct {
	events []Event
	ring   fixedRing
	s, q   int

	// parked mode: the positions of C parked as far as the trace shows.
	parked bool
	asleep map[int64]bool

	windowed bool
	target   string
	cohort   map[string]bool
	paused   map[string]bool
	l        int

	obs          Observed
	seenCalls    map[string]bool
	callVisits   int
	callOutcomes int
	closed       bool // the target has granted
	consecFail   int
	sinceTarget  map[string]int
}

// newChecker validates the ring and budgets and prepares a checker.
func newChecker(events []Event, ring map[int64]string, S, Q int) (*checker, error) {
	r, err := newFixedRing(ring)
	if err != nil {
		return nil, err
	}
	if S < 1 {
		return nil, &WindowError{Field: "S", Reason: "S must be >= 1"}
	}
	if Q < 1 {
		return nil, &WindowError{Field: "Q", Reason: "Q must be >= 1"}
	}
	return &checker{
		events:      events,
		ring:        r,
		s:           S,
		q:           Q,
		obs:         Observed{TargetGrantEvent: -1, CompetitorGrants: map[string]int{}},
		seenCalls:   map[string]bool{},
		sinceTarget: map[string]int{},
	}, nil
}

// parkedMode switches the checker to a parked-mode trace whose positions
// asleep are parked at its start.
func (c *checker) parkedMode(asleep []int64) error {
	c.parked = true
	c.asleep = map[int64]bool{}
	for _, pos := range asleep {
		if _, ok := c.ring.scopeOf[pos]; !ok {
			return &WindowError{Field: "Asleep", Reason: fmt.Sprintf("position %d is not in the ring", pos)}
		}
		c.asleep[pos] = true
	}
	return nil
}

// allAsleep reports whether every position of C is parked.
func (c *checker) allAsleep() bool {
	return c.parked && len(c.asleep) == len(c.ring.sorted)
}

// run checks every event in order and returns the observations.
func (c *checker) run() (Observed, error) {
	err := c.walk()
	c.obs.Events = len(c.events)
	if c.windowed {
		cohort := []string{c.target}
		for s := range c.obs.CompetitorGrants {
			cohort = append(cohort, s)
		}
		slices.Sort(cohort)
		c.obs.GrantingCohort = cohort
	}
	return c.obs, err
}

// walk performs the per-event checks.
func (c *checker) walk() error {
	for i := range c.events {
		e := &c.events[i]
		if err := c.checkShape(i, e); err != nil {
			return err
		}
		if i == 0 || e.Call != c.events[i-1].Call {
			if i > 0 {
				if err := c.endCall(i - 1); err != nil {
					return err
				}
			}
			if err := c.beginCall(i, e); err != nil {
				return err
			}
		} else if err := c.continueCall(i, e); err != nil {
			return err
		}
		if err := c.checkMembership(i, e); err != nil {
			return err
		}
		if err := c.checkUnit(i, e); err != nil {
			return err
		}
		if c.paused[e.Scope] && e.Disposition != DispPaused {
			return violation(InvPaused, i, "paused scope %q visited with disposition %q, want %q", e.Scope, e.Disposition, DispPaused)
		}
		if c.windowed && !c.closed {
			if err := c.checkWindow(i, e); err != nil {
				return err
			}
		}
		if err := c.checkContiguity(i, e); err != nil {
			return err
		}
		c.callVisits++
		c.callOutcomes += e.Outcomes
		if c.callOutcomes > e.Demand {
			// Invariant 3: filling demand stops immediately, so a call never
			// returns more outcomes than its demand.
			return violation(InvStopOrExhaust, i, "call %q returned %d outcomes for demand %d", e.Call, c.callOutcomes, e.Demand)
		}
		if e.Disposition == DispGrant {
			c.obs.Grants++
			c.obs.Outcomes += int64(e.Outcomes)
		}
	}
	if len(c.events) > 0 {
		return c.endCall(len(c.events) - 1)
	}
	return nil
}

// checkShape rejects malformed events.
func (c *checker) checkShape(i int, e *Event) error {
	switch {
	case !e.Disposition.Valid():
		return violation(InvEventShape, i, "unknown disposition %q", e.Disposition)
	case e.Demand < 1:
		return violation(InvEventShape, i, "demand %d < 1", e.Demand)
	case e.Outcomes < 0:
		return violation(InvEventShape, i, "negative outcome count %d", e.Outcomes)
	}
	return nil
}

// beginCall checks the first event of a call (invariants 1 and 2) and counts
// the call.
func (c *checker) beginCall(i int, e *Event) error {
	// Invariant 1: calls are serialized, so one call's inspections are
	// adjacent; a call identity that reappears interleaved with another call.
	if c.seenCalls[e.Call] {
		return violation(InvSerializedCursor, i, "call %q resumes after another call committed", e.Call)
	}
	c.seenCalls[e.Call] = true
	// Invariant 2: visit ordinals start at 1.
	if e.Visit != 1 {
		return violation(InvContiguousCursor, i, "call %q starts at visit %d, want 1", e.Call, e.Visit)
	}
	// Invariant 1: the durable cursor a call starts from is the cursor the
	// previous committed call left (cross-call continuity).
	if i > 0 {
		if prev := c.events[i-1]; e.CursorBefore != prev.CursorAfter {
			return violation(InvSerializedCursor, i, "call %q starts at cursor %d but the previous call %q left cursor %d", e.Call, e.CursorBefore, prev.Call, prev.CursorAfter)
		}
	}
	c.callVisits = 0
	c.callOutcomes = 0
	c.obs.Calls++
	if c.windowed && !c.closed {
		c.obs.QualifyingCalls++
		if c.obs.QualifyingCalls > c.obs.Bounds.QualifyingCalls {
			return violation(InvBoundCalls, i, "qualifying call %d exceeds the bound %d", c.obs.QualifyingCalls, c.obs.Bounds.QualifyingCalls)
		}
	}
	return nil
}

// continueCall checks a non-first event of a call (invariants 2 and 3).
func (c *checker) continueCall(i int, e *Event) error {
	prev := c.events[i-1]
	switch {
	case e.Demand != prev.Demand:
		return violation(InvEventShape, i, "call %q changes demand from %d to %d", e.Call, prev.Demand, e.Demand)
	case e.Visit != prev.Visit+1:
		// Invariant 2: visits are contiguous; none is skipped or repeated.
		return violation(InvContiguousCursor, i, "call %q visit %d follows visit %d", e.Call, e.Visit, prev.Visit)
	case e.CursorBefore != prev.CursorAfter:
		// Invariant 2: the call-local cursor is the previous visit's position.
		return violation(InvContiguousCursor, i, "cursor before %d differs from the previous visit's cursor after %d", e.CursorBefore, prev.CursorAfter)
	case c.callOutcomes >= e.Demand:
		// Invariant 3: filling demand stops the call immediately.
		return violation(InvStopOrExhaust, i, "call %q inspects again after filling demand %d", e.Call, e.Demand)
	case c.callVisits >= c.s:
		// Invariant 3: a call consumes at most S inspections.
		return violation(InvStopOrExhaust, i, "call %q exceeds S = %d inspections", e.Call, c.s)
	}
	return nil
}

// endCall checks invariant 3 for the call whose last event is at index last.
func (c *checker) endCall(last int) error {
	e := c.events[last]
	// Invariant 3: a nonempty qualifying call that does not fill its demand
	// consumes all S inspections; an early stop needs filled demand.
	if c.callVisits < c.s && c.callOutcomes != e.Demand && !c.allAsleep() {
		return violation(InvStopOrExhaust, last, "call %q stopped after %d of S = %d inspections with %d of %d outcomes", e.Call, c.callVisits, c.s, c.callOutcomes, e.Demand)
	}
	return nil
}

// checkMembership enforces that the visited position is in C (invariant 2)
// and that the event's scope is the scope of that position.
func (c *checker) checkMembership(i int, e *Event) error {
	scope, inRing := c.ring.scopeOf[e.Position]
	if !inRing {
		return violation(InvContiguousCursor, i, "visited position %d is not in C", e.Position)
	}
	if scope != e.Scope {
		return violation(InvEventShape, i, "position %d belongs to scope %q, event names %q", e.Position, scope, e.Scope)
	}
	return nil
}

// checkContiguity enforces invariant 2 on one visit.
func (c *checker) checkContiguity(i int, e *Event) error {
	if c.parked {
		if err := c.checkAwakeContiguity(i, e); err != nil {
			return err
		}
	} else if want := nextPosition(c.ring.sorted, e.CursorBefore); e.Position != want {
		// Invariant 2: the visit is the next position of C strictly after the
		// cursor, wrapping to the smallest; this rejects skipped and repeated
		// positions and accepts repeated wrap when H < S.
		return violation(InvContiguousCursor, i, "visited position %d but the next position of C after cursor %d is %d", e.Position, e.CursorBefore, want)
	}
	// Invariant 2: every inspected position advances the cursor to itself.
	if e.CursorAfter != e.Position {
		return violation(InvContiguousCursor, i, "cursor after %d differs from the visited position %d", e.CursorAfter, e.Position)
	}
	return nil
}

// checkAwakeContiguity enforces invariant 2 over the awake ring: every
// position of C between the cursor and the visit is parked; the visit shows
// its position awake, and a park puts it to sleep again.
func (c *checker) checkAwakeContiguity(i int, e *Event) error {
	for pos := nextPosition(c.ring.sorted, e.CursorBefore); pos != e.Position; pos = nextPosition(c.ring.sorted, pos) {
		if !c.asleep[pos] {
			return violation(InvContiguousCursor, i, "visited position %d after cursor %d, passing over the awake position %d", e.Position, e.CursorBefore, pos)
		}
	}
	delete(c.asleep, e.Position)
	if e.Parked {
		c.asleep[e.Position] = true
	}
	return nil
}

// checkUnit enforces the grant unit and outcome-backed epoch rule.
func (c *checker) checkUnit(i int, e *Event) error {
	if e.Parked && (!c.parked || (e.Disposition != DispEmptyPage && e.Disposition != DispRateLimited)) {
		return violation(InvGrantUnit, i, "a %q visit parked its partition; only an empty page or a rate_limited visit of a parked-mode trace parks", e.Disposition)
	}
	if e.Disposition == DispGrant {
		switch {
		case e.Outcomes < 1:
			return violation(InvGrantUnit, i, "grant with %d outcomes; zero outcomes is not a grant", e.Outcomes)
		case e.Outcomes > c.q:
			return violation(InvGrantUnit, i, "grant with %d outcomes exceeds Q = %d", e.Outcomes, c.q)
		case e.EpochDelta != 1:
			return violation(InvGrantUnit, i, "grant advanced admission_epoch by %d, want exactly 1", e.EpochDelta)
		}
		return nil
	}
	if e.Outcomes != 0 || e.EpochDelta != 0 {
		return violation(InvGrantUnit, i, "unsuccessful inspection %q has %d outcomes and epoch delta %d, want 0 and 0", e.Disposition, e.Outcomes, e.EpochDelta)
	}
	return nil
}

// checkWindow enforces the cohort rule, invariants 4 and 5 and the grant and
// outcome bounds on an event strictly before the target grant.
func (c *checker) checkWindow(i int, e *Event) error {
	grant := e.Disposition == DispGrant
	if e.Scope == c.target {
		c.obs.TargetInspections++
		clear(c.sinceTarget)
		if grant {
			c.closed = true
			c.obs.TargetGranted = true
			c.obs.TargetGrantEvent = i
			return nil
		}
		// A target without a token is not admissible: the window was not
		// eligible, so its bounds do not apply.
		if e.Disposition == DispRateLimited {
			return violation(InvTargetToken, i, "the target %q had no token of its rate: the window is not eligible until it has one", e.Scope)
		}
		c.consecFail++
		c.obs.FailedTargetInspections++
		c.obs.MaxConsecutiveFailedTarget = max(c.obs.MaxConsecutiveFailedTarget, c.consecFail)
		// Invariant 5: at most L consecutive target inspections fail.
		if c.consecFail > c.l {
			return violation(InvTargetFailures, i, "%d consecutive failed target inspections exceed L = %d", c.consecFail, c.l)
		}
		return nil
	}
	if !grant {
		return nil
	}
	// Window rule: no partition outside P grants before the target.
	if !c.cohort[e.Scope] {
		return violation(InvCohort, i, "scope %q outside the cohort P grants before the target", e.Scope)
	}
	c.sinceTarget[e.Scope]++
	n := c.sinceTarget[e.Scope]
	c.obs.MaxCompetitorGrantsPerRound = max(c.obs.MaxCompetitorGrantsPerRound, n)
	// Invariant 4: at most one grant per competitor per round.
	if n > 1 {
		where := "between consecutive target inspections"
		if c.obs.TargetInspections == 0 {
			where = "before the first target inspection"
		}
		return violation(InvCompetitorOnce, i, "competitor %q receives grant %d %s", e.Scope, n, where)
	}
	c.obs.CompetitorGrants[e.Scope]++
	c.obs.CompetingGrants++
	c.obs.CompetingOutcomes += int64(e.Outcomes)
	if c.obs.CompetingGrants > c.obs.Bounds.CompetingGrants {
		return violation(InvBoundGrants, i, "%d competing grants exceed the bound %d", c.obs.CompetingGrants, c.obs.Bounds.CompetingGrants)
	}
	if c.obs.CompetingOutcomes > c.obs.Bounds.CompetingOutcomes {
		return violation(InvBoundOutcomes, i, "%d competing outcomes exceed the bound %d", c.obs.CompetingOutcomes, c.obs.Bounds.CompetingOutcomes)
	}
	return nil
}
