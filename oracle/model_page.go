package oracle

import (
	"cmp"
	"slices"
	"time"
)

// workClass is a reservation/preference class: ready or expired. Admitted
// and queued ready rows are both in the ready class.
type workClass int

const (
	classReady workClass = iota
	classExpired
)

// other returns the other class.
func (k workClass) other() workClass { return 1 - k }

// preferredBy reports whether pref names class k.
func (k workClass) preferredBy(pref Preference) bool {
	return (k == classReady && pref == PreferReady) || (k == classExpired && pref == PreferExpired)
}

// candidate is one row of a visit's ready or expired page.
type candidate struct {
	run      *Run
	class    workClass
	admitted bool
	queueNo  int // 1, 2, ... for queued rows in FIFO order; 0 for admitted rows
	poison   bool
	eligible time.Time // wake_at (ready) or claimed_at (expired)
	head     bool      // first row of its class page (Legacy's ranking)
	rank     int       // 1, 2, ... within its class: admitted-ready then queued, resp. expired
}

// isDueReady: healthy running, unclaimed, wake_at <= now.
func isDueReady(r *Run, now time.Time) bool {
	return r.Healthy() && !r.Claimed() && r.HasWake && !r.WakeAt.After(now)
}

// isExpiredClaim: healthy running, claimed with claimed_at < cutoff.
func isExpiredClaim(r *Run, cutoff time.Time) bool {
	return r.Healthy() && r.Claimed() && r.ClaimedAt.Before(cutoff)
}

// byTimeThenID orders rows by a timestamp, then internal id.
func byTimeThenID(ta time.Time, a *Run, tb time.Time, b *Run) int {
	if c := ta.Compare(tb); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// tenantFairPages builds the pages of one TenantFair visit to scope
// (docs/claim-algorithm.md, "The TenantFair claim call", step 7, Candidates):
// admitted-ready rows by (wake_at, id) up to K, then queued-ready rows by
// (wake_at, id) filling the rest of K and numbered 1, 2, ...; marked expired
// claims by (claimed_at, id) up to K. A row with claim_attempts >=
// maxAttempts is a poison candidate. The engine reads the queued page only
// up to min(Q, remaining demand); both choose the same outcomes because
// promotion is contiguous (see "The reference model" there).
func (m *Model) tenantFairPages(scope string, now, cutoff time.Time, maxAttempts int) []candidate {
	k := m.budgets.K
	var admitted, queued, expired []*Run
	for _, r := range m.runs {
		if r.Scope != scope {
			continue
		}
		switch {
		case isDueReady(r, now) && r.Admitted:
			admitted = append(admitted, r)
		case isDueReady(r, now):
			queued = append(queued, r)
		case isExpiredClaim(r, cutoff) && r.Admitted:
			expired = append(expired, r)
		}
	}
	byWake := func(a, b *Run) int { return byTimeThenID(a.WakeAt, a, b.WakeAt, b) }
	byClaim := func(a, b *Run) int { return byTimeThenID(a.ClaimedAt, a, b.ClaimedAt, b) }
	slices.SortFunc(admitted, byWake)
	slices.SortFunc(queued, byWake)
	slices.SortFunc(expired, byClaim)
	admitted = admitted[:min(len(admitted), k)]
	queued = queued[:min(len(queued), k-len(admitted))]
	expired = expired[:min(len(expired), k)]

	var out []candidate
	for i, r := range admitted {
		out = append(out, candidate{run: r, class: classReady, admitted: true,
			poison: r.Attempts >= maxAttempts, eligible: r.WakeAt, rank: i + 1})
	}
	for i, r := range queued {
		out = append(out, candidate{run: r, class: classReady, queueNo: i + 1,
			poison: r.Attempts >= maxAttempts, eligible: r.WakeAt, rank: len(admitted) + i + 1})
	}
	for i, r := range expired {
		out = append(out, candidate{run: r, class: classExpired, admitted: true,
			poison: r.Attempts >= maxAttempts, eligible: r.ClaimedAt, rank: i + 1})
	}
	return out
}

// classReserve is how many leading rows of a class whose head matters a
// visit freezes ahead of the rest: K / 4, so up to three rows held by other
// transactions hand the head's place to the next row of the class, and the
// K - 2 * K / 4 other frozen ids still cover the Q - 2 further outcomes.
func classReserve(k int) int { return k / 4 }

// headMatters reports whether a class's head is ranked first in a visit:
// with demand 1 both classes' heads are, with demand >= 2 those of classes
// not yet served in the call.
func headMatters(k workClass, demand int, served [2]bool) bool {
	return demand == 1 || !served[k]
}

// flag orders true before false.
func flag(b bool) int {
	if b {
		return 0
	}
	return 1
}

// rankFreeze sorts a visit's candidates into the freezing order of
// docs/claim-algorithm.md, "The TenantFair claim call", step 7 (the first K
// are frozen and locked):
//
//  1. the first classReserve rows of each class whose head matters;
//  2. admitted before queued;
//  3. demand = 1: rows of the preferred class;
//  4. queue number (admitted rows have 0);
//  5. poison candidates before leases;
//  6. eligible time; 7. internal id.
//
// served is the call's served state when the visit starts.
func rankFreeze(cands []candidate, demand, reserve int, pref Preference, served [2]bool) {
	slices.SortFunc(cands, func(a, b candidate) int {
		ra := a.rank <= reserve && headMatters(a.class, demand, served)
		rb := b.rank <= reserve && headMatters(b.class, demand, served)
		if c := cmp.Compare(flag(ra), flag(rb)); c != 0 {
			return c
		}
		return compareRest(a, b, demand, pref)
	})
}

// rankWalk sorts the rows a visit locked into its walk order: admitted
// before queued; then the class heads that matter, each the oldest locked
// admitted row of its class (so a head held elsewhere hands its place to
// the next row of the class); then as rankFreeze from step 3.
func rankWalk(locked []candidate, demand int, pref Preference, served [2]bool) {
	var heads [2]int // class rank of each class's head, 0 when it has none
	for _, cd := range locked {
		if cd.admitted && (heads[cd.class] == 0 || cd.rank < heads[cd.class]) {
			heads[cd.class] = cd.rank
		}
	}
	isHead := func(cd candidate) bool {
		return cd.admitted && cd.rank == heads[cd.class] && headMatters(cd.class, demand, served)
	}
	slices.SortFunc(locked, func(a, b candidate) int {
		if c := cmp.Compare(flag(a.admitted), flag(b.admitted)); c != 0 {
			return c
		}
		if c := cmp.Compare(flag(isHead(a)), flag(isHead(b))); c != 0 {
			return c
		}
		return compareRest(a, b, demand, pref)
	})
}

// compareRest is the common tail of both orders: admitted before queued,
// the preferred class (demand 1), queue number, poison first, eligible
// time, id.
func compareRest(a, b candidate, demand int, pref Preference) int {
	if c := cmp.Compare(flag(a.admitted), flag(b.admitted)); c != 0 {
		return c
	}
	if demand == 1 {
		if c := cmp.Compare(flag(a.class.preferredBy(pref)), flag(b.class.preferredBy(pref))); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(a.queueNo, b.queueNo); c != 0 {
		return c
	}
	if c := cmp.Compare(flag(a.poison), flag(b.poison)); c != 0 {
		return c
	}
	return byTimeThenID(a.eligible, a.run, b.eligible, b.run)
}
