package oracle

import (
	"cmp"
	"slices"
	"time"
)

// ClaimLegacy runs one tenant-blind Legacy claim call over the whole domain:
//
//   - candidates are the due ready rows (healthy running, unclaimed,
//     wake_at <= now) by (wake_at, id) and the expired claims (healthy
//     claimed rows with claimed_at < cutoff, marked or not) by
//     (claimed_at, id);
//   - ranking: demand >= 2: the head of each nonempty class first (the class
//     reservation of step 5); demand = 1: the preferred class first (with
//     fallback to the other); then oldest first by (eligible time, id)
//     across both classes;
//   - up to min(demand, S*Q) outcomes (256 with the production budgets,
//     the per-call outcome ceiling), with the same last-slot rule as
//     TenantFair counted on that limit; no caps, no ring, no cursor, no
//     inspections, no epochs;
//   - the same lease and poison mutation as TenantFair, except that a lease
//     never touches the marker. A poison clears the marker because a
//     poisoned row may not hold one (schema check).
//
// Ready outcomes report ClassAdmittedReady for a marked row and
// ClassQueuedReady otherwise, with an empty Disposition; expired outcomes
// report ClassExpired / OutcomeExpiredRecovery. Outcome.Visit is 0 and
// Ordinal counts within the call.
func (m *Model) ClaimLegacy(now, cutoff time.Time, demand, maxAttempts int, pref Preference) (ClaimResult, error) {
	if err := validateClaim("ClaimLegacy", now, cutoff, demand, maxAttempts, pref); err != nil {
		return ClaimResult{}, err
	}
	res := ClaimResult{Demand: demand, CursorBefore: m.cursor, CursorAfter: m.cursor}
	if m.domainPaused {
		return res, nil
	}
	call := &claimCall{m: m, now: now, cutoff: cutoff, demand: demand,
		remaining: min(demand, m.budgets.S*m.budgets.Q), maxAttempts: maxAttempts, pref: pref}
	call.served = m.initialServed(now, cutoff, false)

	var ready, expired []candidate
	for _, r := range m.runs {
		switch {
		case isDueReady(r, now):
			ready = append(ready, candidate{run: r, class: classReady, admitted: r.Admitted,
				poison: r.Attempts >= maxAttempts, eligible: r.WakeAt})
		case isExpiredClaim(r, cutoff):
			expired = append(expired, candidate{run: r, class: classExpired, admitted: r.Admitted,
				poison: r.Attempts >= maxAttempts, eligible: r.ClaimedAt})
		}
	}
	byAge := func(a, b candidate) int { return byTimeThenID(a.eligible, a.run, b.eligible, b.run) }
	slices.SortFunc(ready, byAge)
	slices.SortFunc(expired, byAge)
	if len(ready) > 0 {
		ready[0].head = true
	}
	if len(expired) > 0 {
		expired[0].head = true
	}
	cands := append(ready, expired...)
	flag := func(b bool) int {
		if b {
			return 0
		}
		return 1
	}
	served := call.served
	slices.SortFunc(cands, func(a, b candidate) int {
		if demand >= 2 {
			if c := cmp.Compare(flag(a.head && !served[a.class]), flag(b.head && !served[b.class])); c != 0 {
				return c
			}
		}
		if demand == 1 {
			if c := cmp.Compare(flag(a.class.preferredBy(pref)), flag(b.class.preferredBy(pref))); c != 0 {
				return c
			}
		}
		return byAge(a, b)
	})
	for _, cd := range cands {
		if call.remaining == 0 {
			break
		}
		if call.reservedAgainst(cd.class) {
			continue
		}
		res.Outcomes = append(res.Outcomes, call.applyLegacy(cd, len(res.Outcomes)+1))
		call.served[cd.class] = true
		call.remaining--
	}
	return res, nil
}

// applyLegacy mutates the row of a Legacy candidate and returns its outcome.
func (c *claimCall) applyLegacy(cd candidate, ordinal int) Outcome {
	r := cd.run
	o := Outcome{Ordinal: ordinal, RunID: r.RunID, Scope: r.Scope, EligibleAt: cd.eligible}
	switch {
	case cd.class == classExpired:
		o.Class, o.Disposition = ClassExpired, OutcomeExpiredRecovery
	case r.Admitted:
		o.Class = ClassAdmittedReady
	default:
		o.Class = ClassQueuedReady
	}
	if cd.poison {
		poison(r, c.now, PoisonMaxClaimAttempts)
		o.Poison = true
	} else {
		c.m.lease(r, c.now, false)
		o.Token = r.Token
	}
	o.ClaimAttempt = r.Attempts
	o.CheckpointSeq = r.CheckpointSeq
	return o
}
