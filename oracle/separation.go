package oracle

import (
	"fmt"
	"time"
)

// SeparationResult is the outcome of the deterministic Legacy separation
// control (docs/claim-algorithm.md, "The bounds", last paragraph).
type SeparationResult struct {
	// N is the number of older hot rows.
	N int
	// LegacyBypass is the number of hot outcomes before the target's first
	// outcome under Legacy (exactly N).
	LegacyBypass int
	// TenantFairBypass is the same count under TenantFair.
	TenantFairBypass int
	// TenantFairGrants is the number of hot grants before the target grant
	// under TenantFair.
	TenantFairGrants int
	// TenantFairEvents is the TenantFair trace up to and including the call
	// of the target grant, starting at the window opening.
	TenantFairEvents []Event
	// Window is the eligible window of that trace (L = 0).
	Window Window
}

// Separation scope keys and the fixed base time of the control.
const (
	separationHot    = "hot"
	separationTarget = "target"
)

var separationBase = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Separation runs the control for n >= 2 (ErrInvalidArgument otherwise):
// one hot partition is seeded with n older ready rows, then one target row
// in another partition; every call has demand 1, preference none, and each
// outcome is completed (terminal commit) before the next call. It reports
// how many hot outcomes precede the target's first outcome under Legacy and
// under TenantFair (default cap n + 1, so no cap ever binds).
func Separation(n int) (SeparationResult, error) {
	if n < 2 {
		return SeparationResult{}, opError("Separation", ErrInvalidArgument, "n = %d < 2", n)
	}
	res := SeparationResult{N: n}
	legacy, err := separationSeed(n)
	if err != nil {
		return res, err
	}
	res.LegacyBypass, _, _, err = separationRun(legacy, n, false)
	if err != nil {
		return res, err
	}
	fair, err := separationSeed(n)
	if err != nil {
		return res, err
	}
	ring := fair.Ring()
	res.TenantFairBypass, res.TenantFairGrants, res.TenantFairEvents, err = separationRun(fair, n, true)
	if err != nil {
		return res, err
	}
	b := fair.Budgets()
	res.Window = Window{Target: separationTarget, Cohort: []string{separationHot, separationTarget},
		Ring: ring, S: b.S, Q: b.Q, L: 0}
	return res, nil
}

// separationSeed builds the seeded model.
func separationSeed(n int) (*Model, error) {
	m, err := NewModel(n + 1)
	if err != nil {
		return nil, err
	}
	for i := range n {
		if err := m.InsertRun(separationHot, fmt.Sprintf("hot-%d", i+1), separationBase.Add(time.Duration(i)*time.Second)); err != nil {
			return nil, err
		}
	}
	if err := m.InsertRun(separationTarget, "target-1", separationBase.Add(time.Duration(n)*time.Second)); err != nil {
		return nil, err
	}
	return m, nil
}

// separationRun claims with demand 1 until the target's first outcome,
// completing every outcome before the next call. It returns the hot
// outcomes and hot grants before the target outcome and the TenantFair
// trace.
func separationRun(m *Model, n int, tenantFair bool) (hot, hotGrants int, events []Event, err error) {
	now := separationBase.Add(time.Duration(n+1) * time.Second)
	for call := 1; call <= 2*n+2; call++ {
		var res ClaimResult
		if tenantFair {
			res, err = m.Claim(now, now, 1, 1<<30, PreferNone)
			events = append(events, res.Events(fmt.Sprint(call))...)
			for _, in := range res.Inspections {
				if in.Disposition == DispGrant && in.Scope == separationHot {
					hotGrants++
				}
			}
		} else {
			res, err = m.ClaimLegacy(now, now, 1, 1<<30, PreferNone)
		}
		if err != nil {
			return 0, 0, nil, err
		}
		for _, o := range res.Outcomes {
			if o.Scope == separationTarget {
				return hot, hotGrants, events, nil
			}
			hot++
			if err := m.Commit(o.RunID, o.Token, o.CheckpointSeq, Schedule{Kind: ReleaseTerminal, Status: StatusDone}, now); err != nil {
				return 0, 0, nil, err
			}
		}
		now = now.Add(time.Second)
	}
	return 0, 0, nil, opError("Separation", ErrInvalidState, "target never served")
}
