package oracle

import (
	"slices"
	"time"
)

// WakeBatch is the most partitions the wake sweep of one parked-mode claim
// call unparks (docket_tenant_fair_claim's c_wake_batch).
const WakeBatch = 64

// SetParkDormant turns parked partitions on or off (docket_claim_policy.
// park_dormant). Turning them off unparks every partition, like the admin
// write and startup synchronization do. Turning them on parks every awake,
// unpaused member of the ring that is dormant at the write, like the batch
// park that follows the switch; the model does not know the database clock
// of that write and takes every wake time as later than it (the same
// assumption as InsertRun's). SetParkDormantAt names that clock.
func (m *Model) SetParkDormant(on bool) { m.SetParkDormantAt(on, time.Time{}) }

// SetParkDormantAt is SetParkDormant with the database clock of the switch:
// a healthy unclaimed run due at dbNow keeps its partition awake.
func (m *Model) SetParkDormantAt(on bool, dbNow time.Time) {
	m.park = on
	for _, p := range m.order {
		switch {
		case !on:
			unpark(p)
		case p.Unfinished > 0 && !p.Parked && !p.Paused:
			m.tryPark(p, dbNow)
		}
	}
}

// ParkDormant reports whether parked partitions are on.
func (m *Model) ParkDormant() bool { return m.park }

// unpark puts p back in the awake ring.
func unpark(p *Partition) {
	p.Parked = false
	p.ParkedUntil = time.Time{}
}

// sweep is the wake sweep of a parked-mode call: it unparks at most
// WakeBatch partitions whose parked_until is at or before now, earliest
// first, and returns how many.
func (m *Model) sweep(now time.Time) int {
	var due []*Partition
	for _, p := range m.order {
		if p.Parked && !p.ParkedUntil.IsZero() && !p.ParkedUntil.After(now) {
			due = append(due, p)
		}
	}
	slices.SortStableFunc(due, func(a, b *Partition) int { return a.ParkedUntil.Compare(b.ParkedUntil) })
	due = due[:min(len(due), WakeBatch)]
	for _, p := range due {
		unpark(p)
	}
	return len(due)
}

// awakePositions returns the ascending positions of the awake ring: with
// unfinished work and, in parked mode, not parked.
func (m *Model) awakePositions() []int64 {
	var out []int64
	for _, p := range m.order {
		if p.Unfinished > 0 && !(m.park && p.Parked) {
			out = append(out, p.Position)
		}
	}
	return out
}

// tryPark parks p when it is dormant at now: no claimed running row and no
// healthy unclaimed running row due at now. It parks until the earliest
// wake_at of its healthy unclaimed running rows, else until a write, and
// reports whether it parked.
func (m *Model) tryPark(p *Partition, now time.Time) bool {
	var next time.Time
	for _, r := range m.runs {
		if r.Scope != p.Scope || !r.Healthy() {
			continue
		}
		if r.Claimed() || !r.WakeAt.After(now) {
			return false
		}
		if next.IsZero() || r.WakeAt.Before(next) {
			next = r.WakeAt
		}
	}
	p.Parked, p.ParkedUntil = true, next
	return true
}

// wakeByWrite applies rule 3 to the partition of r after a write at now
// that made r healthy, unclaimed and running or moved its wake_at: a run
// due at the write unparks the partition, one due later parks it no later
// than its wake_at. An awake partition stays awake.
func (m *Model) wakeByWrite(r *Run, now time.Time) {
	p := m.parts[r.Scope]
	if !p.Parked {
		return
	}
	switch {
	case !r.WakeAt.After(now):
		unpark(p)
	case p.ParkedUntil.IsZero() || r.WakeAt.Before(p.ParkedUntil):
		p.ParkedUntil = r.WakeAt
	}
}

// wakeByUpdate is the trigger condition of rule 3 for an update of r from
// before: the run is now healthy, unclaimed and running, and it was not
// before, or it was unclaimed and its wake_at moved.
func (m *Model) wakeByUpdate(before Run, r *Run, now time.Time) {
	if !r.Healthy() || r.Claimed() {
		return
	}
	if before.Status != StatusRunning || before.Poisoned ||
		(!before.Claimed() && (before.HasWake != r.HasWake || !before.WakeAt.Equal(r.WakeAt))) {
		m.wakeByWrite(r, now)
	}
}
