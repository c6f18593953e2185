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
	head     bool      // first row of its class page
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
			poison: r.Attempts >= maxAttempts, eligible: r.WakeAt, head: i == 0})
	}
	for i, r := range queued {
		out = append(out, candidate{run: r, class: classReady, queueNo: i + 1,
			poison: r.Attempts >= maxAttempts, eligible: r.WakeAt, head: i == 0 && len(admitted) == 0})
	}
	for i, r := range expired {
		out = append(out, candidate{run: r, class: classExpired, admitted: true,
			poison: r.Attempts >= maxAttempts, eligible: r.ClaimedAt, head: i == 0})
	}
	return out
}

// rankCandidates sorts a visit's candidates into the freeze ranking of
// docs/claim-algorithm.md, "The TenantFair claim call", step 7, Candidates:
//
//  1. demand >= 2: heads of classes not yet served in this call first;
//  2. admitted before queued;
//  3. demand = 1: class heads first, then rows of the preferred class;
//  4. queue number (admitted rows have 0);
//  5. poison candidates before leases;
//  6. eligible time; 7. internal id.
//
// served is the call's served state when the visit starts.
func rankCandidates(cands []candidate, demand int, pref Preference, served [2]bool) {
	flag := func(b bool) int {
		if b {
			return 0
		}
		return 1
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		if demand >= 2 {
			if c := cmp.Compare(flag(a.head && !served[a.class]), flag(b.head && !served[b.class])); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(flag(a.admitted), flag(b.admitted)); c != 0 {
			return c
		}
		if demand == 1 {
			if c := cmp.Compare(flag(a.head), flag(b.head)); c != 0 {
				return c
			}
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
	})
}
