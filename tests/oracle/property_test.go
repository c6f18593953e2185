package oracle

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/oracle"
)

// t0 is the fixed base time of the property tests.
var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// drawSeconds draws a duration of lo..hi seconds.
func drawSeconds(rt *rapid.T, lo, hi int, label string) time.Duration {
	return time.Duration(rapid.IntRange(lo, hi).Draw(rt, label)) * time.Second
}

// drawPreference draws a claim preference.
func drawPreference(rt *rapid.T) oracle.Preference {
	return rapid.SampledFrom([]oracle.Preference{oracle.PreferNone, oracle.PreferReady, oracle.PreferExpired}).Draw(rt, "pref")
}

// drawBudgets draws production or small budgets.
func drawBudgets(rt *rapid.T) oracle.Budgets {
	if rapid.Bool().Draw(rt, "small budgets") {
		return oracle.Budgets{
			S: rapid.IntRange(1, 6).Draw(rt, "S"),
			Q: rapid.IntRange(1, 4).Draw(rt, "Q"),
			K: rapid.IntRange(1, 5).Draw(rt, "K"),
		}
	}
	return oracle.DefaultBudgets()
}

// checkRows enforces the row checks of the schema on every run.
func checkRows(rt *rapid.T, m *oracle.Model) {
	for _, r := range m.Runs() {
		bad := func(why string) { rt.Fatalf("run %s %s: %+v", r.RunID, why, r) }
		if r.Admitted && (r.Status != oracle.StatusRunning || r.Poisoned) {
			bad("holds a marker while not healthy running")
		}
		if r.Claimed() && (r.Status != oracle.StatusRunning || r.Poisoned || r.HasWake) {
			bad("holds a claim while not healthy running without wake")
		}
		if r.Healthy() && r.HasWake == r.Claimed() {
			bad("healthy running without exactly one of wake or claim")
		}
		if r.Status != oracle.StatusRunning && (r.Claimed() || r.HasWake || r.Poisoned) {
			bad("waiting or terminal with claim, wake or poison")
		}
		if r.Poisoned && (r.HasWake || r.Claimed() || r.PoisonReason == "") {
			bad("poisoned with wake or claim or no reason")
		}
	}
}

// checkClaimCall checks one claim call of the model: invariants 1-3 and the
// unit rule through CheckMechanics, cursor continuity, demand and epochs.
func checkClaimCall(rt *rapid.T, m *oracle.Model, before *oracle.Model, ring map[int64]string, res oracle.ClaimResult, call string, lastCursor int64) {
	b := m.Budgets()
	if res.CursorBefore != lastCursor {
		rt.Fatalf("invariant 1: call starts at %d, previous call left %d", res.CursorBefore, lastCursor)
	}
	if len(ring) == 0 {
		if len(res.Inspections) != 0 || res.CursorAfter != res.CursorBefore {
			rt.Fatalf("empty ring call = %+v", res)
		}
		return
	}
	if _, err := oracle.CheckMechanics(res.Events(call), ring, b.S, b.Q); err != nil {
		rt.Fatalf("model trace: %v", err)
	}
	if res.Inspections[0].CursorBefore != lastCursor || res.CursorAfter != res.Inspections[len(res.Inspections)-1].CursorAfter {
		rt.Fatalf("cursor bookkeeping: %+v", res)
	}
	if len(res.Outcomes) > res.Demand || (len(res.Outcomes) < res.Demand && len(res.Inspections) != b.S) {
		rt.Fatalf("invariant 3: %d outcomes, %d inspections for demand %d", len(res.Outcomes), len(res.Inspections), res.Demand)
	}
	grants := map[string]int64{}
	n := 0
	for _, in := range res.Inspections {
		grants[in.Scope] += in.EpochDelta
		n += in.Outcomes
	}
	if n != len(res.Outcomes) {
		rt.Fatalf("inspection outcome counts %d != %d outcomes", n, len(res.Outcomes))
	}
	for _, o := range res.Outcomes {
		if res.Inspections[o.Visit-1].Scope != o.Scope {
			rt.Fatalf("outcome %+v not from its visit's partition", o)
		}
	}
	for _, p := range m.Partitions() {
		old, _ := before.Partition(p.Scope)
		if p.Epoch-old.Epoch != grants[p.Scope] {
			rt.Fatalf("epoch of %q moved %d for %d grants", p.Scope, p.Epoch-old.Epoch, grants[p.Scope])
		}
	}
}

// lifecycleProp is the state of the random lifecycle property.
type lifecycleProp struct {
	m          *oracle.Model
	now        time.Time
	lastCursor int64
	calls      int
	runs       int
	scopes     []string
	debt       map[string]bool
	admitted   map[string]int
}

// pick draws a run satisfying keep; ok is false when there is none.
func (h *lifecycleProp) pick(rt *rapid.T, keep func(oracle.Run) bool) (r oracle.Run, ok bool) {
	var rs []oracle.Run
	for _, r := range h.m.Runs() {
		if keep(r) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return oracle.Run{}, false
	}
	return rapid.SampledFrom(rs).Draw(rt, "run"), true
}

// noteCaps marks scopes put in debt by a cap change.
func (h *lifecycleProp) noteCaps() {
	for _, s := range h.scopes {
		if c := h.m.Counts(s, h.now); c.Admitted > c.Cap {
			h.debt[s] = true
		}
	}
}

// must fails on an unexpected error.
func must(rt *rapid.T, err error) {
	if err != nil {
		rt.Fatalf("unexpected error: %v", err)
	}
}

func (h *lifecycleProp) actions() map[string]func(*rapid.T) {
	claimed := func(r oracle.Run) bool { return r.Claimed() }
	return map[string]func(*rapid.T){
		"advance": func(rt *rapid.T) { h.now = h.now.Add(drawSeconds(rt, 0, 40, "dt")) },
		"insert": func(rt *rapid.T) {
			h.runs++
			scope := rapid.SampledFrom(h.scopes).Draw(rt, "scope")
			must(rt, h.m.InsertRun(scope, fmt.Sprintf("r%d", h.runs), h.now.Add(drawSeconds(rt, -30, 30, "wake"))))
		},
		"claim": func(rt *rapid.T) {
			before := h.m.Clone()
			ring := h.m.Ring()
			demand := rapid.IntRange(1, 6).Draw(rt, "demand")
			cutoff := h.now.Add(-drawSeconds(rt, 0, 120, "ttl"))
			res, err := h.m.Claim(h.now, cutoff, demand, rapid.IntRange(1, 4).Draw(rt, "max attempts"), drawPreference(rt))
			must(rt, err)
			h.calls++
			checkClaimCall(rt, h.m, before, ring, res, fmt.Sprint(h.calls), h.lastCursor)
			h.lastCursor = res.CursorAfter
		},
		"commit": func(rt *rapid.T) {
			r, ok := h.pick(rt, claimed)
			if !ok {
				return
			}
			s := oracle.Schedule{Kind: oracle.ScheduleKind(rapid.IntRange(int(oracle.RetainClaim), int(oracle.ReleaseTerminal)).Draw(rt, "kind"))}
			s.At = h.now.Add(drawSeconds(rt, 1, 60, "at"))
			s.Status = rapid.SampledFrom([]oracle.Status{oracle.StatusDone, oracle.StatusFailed, oracle.StatusCancelled}).Draw(rt, "status")
			must(rt, h.m.Commit(r.RunID, r.Token, r.CheckpointSeq, s, h.now))
		},
		"release": func(rt *rapid.T) {
			r, ok := h.pick(rt, claimed)
			if !ok {
				return
			}
			if ok, err := h.m.ReleaseClaim(r.RunID, r.Token, h.now); !ok || err != nil {
				rt.Fatalf("release = %v, %v", ok, err)
			}
		},
		"refresh": func(rt *rapid.T) {
			r, ok := h.pick(rt, claimed)
			if !ok {
				return
			}
			must(rt, h.m.RefreshClaim(r.RunID, r.Token, h.now))
		},
		"abandon": func(rt *rapid.T) {
			r, ok := h.pick(rt, claimed)
			if !ok {
				return
			}
			must(rt, h.m.AbandonClaim(r.RunID, r.Token, r.CheckpointSeq, h.now,
				h.now.Add(drawSeconds(rt, -5, 30, "retry")), rapid.IntRange(0, 3).Draw(rt, "max abandons")))
		},
		"signal": func(rt *rapid.T) {
			r, ok := h.pick(rt, func(r oracle.Run) bool { return r.Status.Unfinished() && !r.Poisoned })
			if !ok {
				return
			}
			must(rt, h.m.Signal(r.RunID, h.now))
		},
		"mutate": func(rt *rapid.T) {
			r, ok := h.pick(rt, func(r oracle.Run) bool { return r.Status.Unfinished() && !r.Poisoned })
			if !ok {
				return
			}
			status := rapid.SampledFrom([]oracle.Status{oracle.StatusRunning, oracle.StatusWaiting, oracle.StatusDone, oracle.StatusFailed}).Draw(rt, "status")
			must(rt, h.m.MutateRun(r.RunID, status, h.now.Add(drawSeconds(rt, -5, 30, "wake")), h.now))
		},
		"cancel": func(rt *rapid.T) {
			r, ok := h.pick(rt, func(r oracle.Run) bool { return r.Status.Unfinished() })
			if !ok {
				return
			}
			must(rt, h.m.Cancel(r.RunID, h.now))
		},
		"retry": func(rt *rapid.T) {
			r, ok := h.pick(rt, func(r oracle.Run) bool { return r.Poisoned })
			if !ok {
				return
			}
			must(rt, h.m.RetryPoisonedRun(r.RunID, h.now))
		},
		"wake": func(rt *rapid.T) {
			r, ok := h.pick(rt, func(r oracle.Run) bool { return r.Status == oracle.StatusWaiting })
			if !ok {
				return
			}
			must(rt, h.m.Wake(r.RunID, h.now))
		},
		"stale": func(rt *rapid.T) {
			r, ok := h.pick(rt, func(oracle.Run) bool { return true })
			if !ok {
				return
			}
			err := h.m.Commit(r.RunID, "token-stale", r.CheckpointSeq, oracle.Schedule{Kind: oracle.ReleaseTerminal, Status: oracle.StatusDone}, h.now)
			var fe *oracle.FenceError
			if !errors.As(err, &fe) || !errors.Is(err, oracle.ErrClaimLost) {
				rt.Fatalf("stale commit err = %v", err)
			}
			if r.Claimed() {
				err = h.m.AbandonClaim(r.RunID, r.Token, r.CheckpointSeq+1, h.now, h.now, 1)
				if !errors.Is(err, oracle.ErrStaleFence) {
					rt.Fatalf("stale fence err = %v", err)
				}
			}
			if after, _ := h.m.Run(r.RunID); after != r {
				rt.Fatalf("stale write changed %+v -> %+v", r, after)
			}
		},
		"default cap": func(rt *rapid.T) {
			must(rt, h.m.SetDefaultCap(rapid.IntRange(1, 4).Draw(rt, "cap")))
			h.noteCaps()
		},
		"override": func(rt *rapid.T) {
			scope := rapid.SampledFrom(h.scopes).Draw(rt, "scope")
			must(rt, h.m.SetOverride(scope, rapid.IntRange(1, 4).Draw(rt, "cap")))
			h.noteCaps()
		},
		"reset override": func(rt *rapid.T) {
			must(rt, h.m.ResetOverride(rapid.SampledFrom(h.scopes).Draw(rt, "scope")))
			h.noteCaps()
		},
	}
}

// check runs before the first and after every action: row checks, exact unfinished counts,
// live claims <= admitted <= cap (unless a cap change created debt), and no
// admission growth at or above the cap.
func (h *lifecycleProp) check(rt *rapid.T) {
	checkRows(rt, h.m)
	unfinished := map[string]int{}
	for _, r := range h.m.Runs() {
		if r.Status.Unfinished() {
			unfinished[r.Scope]++
		}
	}
	for _, p := range h.m.Partitions() {
		if p.Unfinished != unfinished[p.Scope] {
			rt.Fatalf("unfinished_count of %q = %d, recount %d", p.Scope, p.Unfinished, unfinished[p.Scope])
		}
	}
	for _, s := range h.scopes {
		c := h.m.Counts(s, h.now)
		if c.LiveClaims > c.Admitted {
			rt.Fatalf("scope %q: live claims %d > admitted %d", s, c.LiveClaims, c.Admitted)
		}
		if c.Admitted > c.Cap && !h.debt[s] {
			rt.Fatalf("scope %q: admitted %d > cap %d without debt", s, c.Admitted, c.Cap)
		}
		if c.Admitted > max(h.admitted[s], c.Cap) {
			rt.Fatalf("scope %q: admitted grew from %d to %d at cap %d", s, h.admitted[s], c.Admitted, c.Cap)
		}
		if c.Admitted <= c.Cap {
			h.debt[s] = false
		}
		h.admitted[s] = c.Admitted
	}
}

func TestPropertyModelLifecycle(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m, err := oracle.NewModelWithBudgets(rapid.IntRange(1, 4).Draw(rt, "default cap"), drawBudgets(rt))
		if err != nil {
			rt.Fatal(err)
		}
		h := &lifecycleProp{m: m, now: t0, scopes: []string{"", "a", "b", "c"},
			debt: map[string]bool{}, admitted: map[string]int{}}
		actions := h.actions()
		keys := slices.Sorted(maps.Keys(actions))
		h.check(rt)
		for range rapid.IntRange(1, 150).Draw(rt, "steps") {
			actions[rapid.SampledFrom(keys).Draw(rt, "action")](rt)
			h.check(rt)
		}
	})
}

// settle applies a random count-neutral or non-terminal follow-up to one
// claimed outcome, keeping every partition unfinished (the ring fixed).
func settle(rt *rapid.T, m *oracle.Model, o oracle.Outcome, now time.Time) {
	if o.Poison {
		return
	}
	r, _ := m.Run(o.RunID)
	var err error
	switch rapid.IntRange(0, 4).Draw(rt, "settle") {
	case 0: // keep the claim
	case 1:
		_, err = m.ReleaseClaim(r.RunID, r.Token, now)
	case 2:
		err = m.Commit(r.RunID, r.Token, r.CheckpointSeq, oracle.Schedule{Kind: oracle.ReleaseImmediate}, now)
	case 3:
		err = m.Commit(r.RunID, r.Token, r.CheckpointSeq, oracle.Schedule{Kind: oracle.ReleaseAt, At: now.Add(drawSeconds(rt, 1, 60, "at"))}, now)
	case 4:
		err = m.Commit(r.RunID, r.Token, r.CheckpointSeq, oracle.Schedule{Kind: oracle.ReleaseExternal}, now)
	}
	must(rt, err)
}

// targetAdmissible reports whether ready work of scope permits an outcome:
// a due admitted-ready row, or a due queued row with a free slot.
func targetAdmissible(m *oracle.Model, scope string, now time.Time) bool {
	c := m.Counts(scope, now)
	return c.AdmittedReady > 0 || (c.Queued > 0 && c.Admitted < c.Cap)
}

func TestPropertyFrozenWindow(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m, err := oracle.NewModelWithBudgets(rapid.IntRange(1, 4).Draw(rt, "default cap"), drawBudgets(rt))
		if err != nil {
			rt.Fatal(err)
		}
		b := m.Budgets()
		now := t0
		h := rapid.IntRange(1, 12).Draw(rt, "H")
		runs := 0
		for i := range h {
			scope := fmt.Sprintf("s%d", i)
			for range rapid.IntRange(1, 8).Draw(rt, "rows") {
				runs++
				must(rt, m.InsertRun(scope, fmt.Sprintf("r%d", runs), now.Add(-drawSeconds(rt, 0, 300, "age"))))
			}
			if rapid.Bool().Draw(rt, "override") {
				must(rt, m.SetOverride(scope, rapid.IntRange(1, 4).Draw(rt, "cap")))
			}
		}
		// Before the window: random calls and non-terminal follow-ups.
		for range rapid.IntRange(0, 6).Draw(rt, "warmup calls") {
			now = now.Add(drawSeconds(rt, 0, 30, "dt"))
			res, err := m.Claim(now, now.Add(-drawSeconds(rt, 0, 120, "ttl")), rapid.IntRange(1, 10).Draw(rt, "demand"),
				rapid.IntRange(1, 6).Draw(rt, "max attempts"), drawPreference(rt))
			must(rt, err)
			for _, o := range res.Outcomes {
				settle(rt, m, o, now)
			}
		}
		var candidates []string
		for _, p := range m.Partitions() {
			if targetAdmissible(m, p.Scope, now) {
				candidates = append(candidates, p.Scope)
			}
		}
		if len(candidates) == 0 {
			return // no eligible window in this population
		}
		target := rapid.SampledFrom(candidates).Draw(rt, "target")
		ring := m.Ring()
		if len(ring) != h {
			rt.Fatalf("ring %v lost a partition", ring)
		}

		// The window: calls until the target's first grant. Only competitor
		// rows are touched; no cap or ring change.
		var events []oracle.Event
		granted := false
		for call := 1; call <= 500 && !granted; call++ {
			res, err := m.Claim(now, now.Add(-drawSeconds(rt, 0, 120, "ttl")), rapid.IntRange(1, 20).Draw(rt, "demand"),
				rapid.IntRange(1, 6).Draw(rt, "max attempts"), drawPreference(rt))
			must(rt, err)
			events = append(events, res.Events(fmt.Sprint(call))...)
			for _, o := range res.Outcomes {
				if o.Scope == target {
					granted = true
				}
			}
			if granted {
				break
			}
			for _, o := range res.Outcomes {
				settle(rt, m, o, now)
			}
			now = now.Add(drawSeconds(rt, 0, 20, "dt"))
			if !targetAdmissible(m, target, now) {
				rt.Fatalf("target %q lost admissibility without a grant", target)
			}
		}
		if !granted {
			rt.Fatalf("target %q not granted within 500 calls", target)
		}
		if !slices.Equal(sortedValues(m.Ring()), sortedValues(ring)) {
			rt.Fatalf("ring changed during the window")
		}

		all := make([]string, 0, len(ring))
		for _, s := range ring {
			all = append(all, s)
		}
		loose := oracle.Window{Target: target, Cohort: all, Ring: ring, S: b.S, Q: b.Q, L: 1 << 20}
		obs, err := oracle.Check(events, loose)
		if err != nil {
			rt.Fatalf("loose window: %v", err)
		}
		if !obs.TargetGranted {
			rt.Fatalf("checker missed the target grant")
		}
		tight := oracle.Window{Target: target, Cohort: obs.GrantingCohort, Ring: ring, S: b.S, Q: b.Q, L: obs.MaxConsecutiveFailedTarget}
		obs2, err := oracle.Check(events, tight)
		if err != nil {
			rt.Fatalf("tight window: %v", err)
		}
		if obs2.QualifyingCalls > obs2.Bounds.QualifyingCalls || obs2.CompetingGrants > obs2.Bounds.CompetingGrants ||
			obs2.CompetingOutcomes > obs2.Bounds.CompetingOutcomes {
			rt.Fatalf("observed %+v beyond bounds", obs2)
		}
		if tight.L > 0 {
			short := tight
			short.L--
			var v *oracle.Violation
			if _, err := oracle.Check(events, short); !errors.As(err, &v) || v.Invariant != oracle.InvTargetFailures {
				rt.Fatalf("L-1 window err = %v, want invariant 5", err)
			}
		}
		if len(tight.Cohort) > 1 {
			short := tight
			short.Cohort = slices.DeleteFunc(slices.Clone(tight.Cohort), func(s string) bool { return s != target })
			var v *oracle.Violation
			if _, err := oracle.Check(events, short); !errors.As(err, &v) || v.Invariant != oracle.InvCohort {
				rt.Fatalf("cohort {t} err = %v, want the cohort rule", err)
			}
		}
	})
}

// sortedValues returns the scopes of a ring, sorted.
func sortedValues(ring map[int64]string) []string {
	out := make([]string, 0, len(ring))
	for _, s := range ring {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
