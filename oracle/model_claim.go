package oracle

import (
	"time"
)

// Claim runs one TenantFair claim call (docket_tenant_fair_claim) at time
// now with expiry cutoff, demand, maxAttempts and an advisory class
// preference, following docs/claim-algorithm.md, "The TenantFair claim
// call" (the step numbers below are that section's):
//
//   - Arguments: demand >= 1, maxAttempts >= 1, cutoff <= now and a valid
//     preference, else an error matching ErrInvalidArgument (no change).
//   - A paused domain (PauseDomain) returns no outcome and no visit and
//     changes nothing, not even by its wake sweep.
//   - Step 5 (class reservation, demand >= 2 only): before the first visit a
//     class counts as already served when the domain has no due ready row
//     (healthy running, unclaimed, wake_at <= now, marked or not), resp. no
//     marked healthy claim with claimed_at < cutoff. Rows of paused
//     partitions do not count: no visit can serve them.
//   - Step 6: the ring is read before every visit (claims never change
//     unfinished counts, so in full-ring mode it stays the same). Visits take the next position with
//     unfinished_count > 0 strictly after the cursor, wrapping (repeatedly
//     when the ring has fewer than S positions), up to S visits, and stop as
//     soon as demand is filled. An empty ring produces no visit and leaves
//     the cursor unchanged.
//   - Step 7: see visit. One or more outcomes make a grant and advance the
//     partition's admission_epoch by one.
//   - Step 8: the durable cursor becomes the last visited position.
//   - Parked mode (SetParkDormant): first the wake sweep (at most WakeBatch
//     partitions due at now, earliest first), then the walk over the awake
//     ring, read again before every visit; an empty_page visit of a dormant
//     partition parks it (docs/fairness-parked.md).
//
// Outcomes are returned in production order (visit, then walk order); every
// visit yields one Inspection.
func (m *Model) Claim(now, cutoff time.Time, demand, maxAttempts int, pref Preference) (ClaimResult, error) {
	if err := validateClaim("Claim", now, cutoff, demand, maxAttempts, pref); err != nil {
		return ClaimResult{}, err
	}
	res := ClaimResult{Demand: demand, CursorBefore: m.cursor, CursorAfter: m.cursor}
	if m.domainPaused {
		return res, nil
	}
	woken := 0
	if m.park {
		woken = m.sweep(now)
	}
	if len(m.awakePositions()) == 0 {
		return res, nil
	}
	call := &claimCall{m: m, now: now, cutoff: cutoff, demand: demand, remaining: demand,
		maxAttempts: maxAttempts, pref: pref}
	call.served = m.initialServed(now, cutoff, true)
	cursor := m.cursor
	for v := 1; v <= m.budgets.S && call.remaining > 0; v++ {
		ring := m.awakePositions()
		if len(ring) == 0 {
			break
		}
		pos := nextPosition(ring, cursor)
		p := m.partitionAt(pos)
		in := Inspection{Visit: v, Position: pos, Scope: p.Scope, CursorBefore: cursor, CursorAfter: pos, Woken: woken}
		cursor = pos
		outs, disp := call.visit(p, v)
		in.Disposition = disp
		switch {
		case m.park && disp == DispEmptyPage && m.tryPark(p, now),
			m.park && disp == DispRateLimited && m.tryRatePark(p, now, call.lastGate.tokenAt()):
			in.Parked, in.ParkedUntil = true, p.ParkedUntil
		}
		in.Outcomes = len(outs)
		if len(outs) > 0 {
			p.Epoch++
			in.EpochDelta = 1
		}
		res.Inspections = append(res.Inspections, in)
		res.Outcomes = append(res.Outcomes, outs...)
	}
	m.cursor = cursor
	res.CursorAfter = cursor
	return res, nil
}

// validateClaim checks the claim arguments (step 1).
func validateClaim(op string, now, cutoff time.Time, demand, maxAttempts int, pref Preference) error {
	switch {
	case demand < 1:
		return opError(op, ErrInvalidArgument, "demand %d < 1", demand)
	case maxAttempts < 1:
		return opError(op, ErrInvalidArgument, "max attempts %d < 1", maxAttempts)
	case cutoff.After(now):
		return opError(op, ErrInvalidArgument, "cutoff %v after now %v", cutoff, now)
	case pref != PreferNone && pref != PreferReady && pref != PreferExpired:
		return opError(op, ErrInvalidArgument, "preference %q", pref)
	}
	return nil
}

// initialServed implements step 5: an empty class counts as served. With
// markedExpiredOnly (TenantFair) only marked expired claims count, and rows
// of paused partitions do not (Legacy ignores the pause).
func (m *Model) initialServed(now, cutoff time.Time, markedExpiredOnly bool) [2]bool {
	var nonempty [2]bool
	for _, r := range m.runs {
		if p := m.parts[r.Scope]; markedExpiredOnly && p != nil && p.Paused {
			continue // no TenantFair visit can serve a paused partition's rows
		}
		if isDueReady(r, now) {
			nonempty[classReady] = true
		}
		if isExpiredClaim(r, cutoff) && (r.Admitted || !markedExpiredOnly) {
			nonempty[classExpired] = true
		}
	}
	return [2]bool{!nonempty[classReady], !nonempty[classExpired]}
}

// claimCall is the state of one claim call.
type claimCall struct {
	m           *Model
	now, cutoff time.Time
	demand      int
	remaining   int
	maxAttempts int
	pref        Preference
	served      [2]bool  // per class: an outcome of it was produced, or it was empty at call start
	produced    int      // outcomes so far in the call
	lastGate    rateGate // the rate of the last visit with pages
}

// reservedAgainst reports the last-slot rule: with demand >= 2 and one
// outcome left in the call while the other class is nonempty and unserved,
// rows of an already-served class are skipped. "One slot left" is the
// call's remaining demand, not the grant's remaining Q budget, because the
// reservation carries across partition grants.
func (c *claimCall) reservedAgainst(k workClass) bool {
	return c.demand >= 2 && c.remaining == 1 && c.served[k] && !c.served[k.other()]
}

// visit performs step 7 under partition authority (always obtained in the
// model):
//
//   - A paused partition ends the visit as "paused" before its pages are
//     read: nothing is admitted, leased or stolen, and it never parks.
//   - cap = override else default; admitted = fresh count of running,
//     unpoisoned, marked rows of the scope.
//   - Pages and poison candidates as in tenantFairPages; no rows at all is
//     "empty_page".
//   - Freeze the first K candidates of rankFreeze and lock them; a row held
//     by another transaction (HoldRowLock) is not locked. Walk the locked
//     rows in rankWalk order until min(Q, remaining demand) outcomes.
//   - Last-slot rule: see reservedAgainst.
//   - A queued row must carry the next contiguous queue number (starting at
//     1 and advanced by each queued promotion or queued poison) and needs
//     admitted < cap, so a held queued row or one without a slot blocks
//     every later promotion of the visit. A queued poison needs the same
//     head position and free slot but does not take the slot.
//   - Rate (EffectiveRate): the queued head in turn also needs a token
//     (see Rate); a head without one blocks the rest of the queue and, with
//     no outcome, names the visit DispRateLimited. A queued poison needs a
//     token but takes none; a grant's promotions move the rate time.
//   - Promotion adds one to the local admitted count, admitted poison
//     removes one; reacquisition and expired steal are count-neutral and
//     allowed at or above the cap.
//   - Zero outcomes: see zeroOutcome.
func (c *claimCall) visit(p *Partition, visit int) ([]Outcome, Disposition) {
	m := c.m
	if p.Paused {
		return nil, DispPaused
	}
	capacity := m.EffectiveCap(p.Scope)
	admitted := m.admittedCount(p.Scope)
	cands := m.tenantFairPages(p.Scope, c.now, c.cutoff, c.maxAttempts)
	if len(cands) == 0 {
		return nil, DispEmptyPage
	}
	gate := rateGate{rate: m.EffectiveRate(p.Scope), tat: p.RateTAT}
	rankFreeze(cands, c.demand, classReserve(m.budgets.K), c.pref, c.served)
	frozen := cands[:min(len(cands), m.budgets.K)]
	z := zeroOutcome{noSlot: admitted >= capacity}
	var walk []candidate
	for _, cd := range frozen {
		lead := cd.admitted || cd.queueNo == 1
		z.queued = z.queued || !cd.admitted
		if m.rowLocks[cd.run.ID] {
			continue
		}
		z.leadLocked = z.leadLocked || lead
		walk = append(walk, cd)
	}
	rankWalk(walk, c.demand, c.pref, c.served)
	limit := min(m.budgets.Q, c.remaining)
	nextQueue := 1
	var outs []Outcome
	for _, cd := range walk {
		if len(outs) == limit {
			break
		}
		if c.reservedAgainst(cd.class) {
			z.withheld = z.withheld || cd.admitted || cd.queueNo == 1
			continue
		}
		if !cd.admitted {
			if cd.queueNo != nextQueue || admitted >= capacity {
				continue
			}
			if !gate.allows(c.now) {
				z.rateDenied = true
				continue
			}
			nextQueue++
			if !cd.poison {
				admitted++
				gate.promoted++
			}
		} else if cd.poison {
			admitted--
		}
		c.produced++
		outs = append(outs, c.apply(cd, visit, c.produced))
		c.served[cd.class] = true
		c.remaining--
	}
	c.lastGate = gate
	if len(outs) > 0 {
		p.RateTAT = gate.after(c.now)
		return outs, DispGrant
	}
	return nil, z.disposition()
}

// zeroOutcome is what a visit with frozen rows and no outcome found. Its
// lead rows are those an outcome could come from: every admitted row and the
// queued FIFO head (the rows behind a head that is not promoted are
// blocked).
type zeroOutcome struct {
	noSlot     bool // admitted >= cap when the visit began
	queued     bool // a queued row was frozen
	leadLocked bool // the visit locked a lead row
	withheld   bool // the last-slot rule skipped a locked, fresh lead row
	rateDenied bool // the queued head in turn had a slot but no token
}

// disposition names the first cause that applies (docs/operations.md, visit dispositions):
// no slot for a frozen queued row is "cap_debt_denial"; a queued head in
// turn with a slot but no token is "rate_limited"; a fresh lead row
// withheld by the last-slot rule is "denied"; lead rows locked but all
// failing the recheck are "stale" (never in the model, which has no
// concurrent writes); every lead row held by another transaction is
// "lock_miss".
func (z zeroOutcome) disposition() Disposition {
	switch {
	case z.queued && z.noSlot:
		return DispCapDebtDenial
	case z.rateDenied:
		return DispRateLimited
	case z.withheld:
		return DispDenied
	case z.leadLocked:
		return DispStale
	}
	return DispLockMiss
}

// apply mutates the row of a TenantFair candidate (lease or poison) and
// returns its outcome.
func (c *claimCall) apply(cd candidate, visit, ordinal int) Outcome {
	r := cd.run
	o := Outcome{Visit: visit, Ordinal: ordinal, RunID: r.RunID, Scope: r.Scope, EligibleAt: cd.eligible}
	switch {
	case cd.class == classExpired:
		o.Class, o.Disposition = ClassExpired, OutcomeExpiredRecovery
	case cd.admitted:
		o.Class, o.Disposition = ClassAdmittedReady, OutcomeAdmittedReacquisition
	default:
		o.Class, o.Disposition = ClassQueuedReady, OutcomeQueuedPromotion
	}
	if cd.poison {
		poison(r, c.now, PoisonMaxClaimAttempts)
		o.Poison = true
	} else {
		c.m.lease(r, c.now, !cd.admitted)
		o.Token = r.Token
	}
	o.ClaimAttempt = r.Attempts
	o.CheckpointSeq = r.CheckpointSeq
	return o
}
