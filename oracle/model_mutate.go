package oracle

import "time"

// lease claims r: new token, claimed_at = now, wake cleared, attempts + 1.
// With promote the marker is set to now; otherwise it is kept.
func (m *Model) lease(r *Run, now time.Time, promote bool) {
	r.Token = m.newToken()
	r.ClaimedAt = now
	clearWake(r)
	r.Attempts++
	if promote {
		r.Admitted = true
		r.AdmittedAt = now
	}
}

// poison poisons r: claim, wake and marker cleared, poisoned_at = now with
// the reason; attempts unchanged; status stays running.
func poison(r *Run, now time.Time, reason string) {
	clearClaim(r)
	clearWake(r)
	clearMarker(r)
	r.Poisoned = true
	r.PoisonedAt = now
	r.PoisonReason = reason
}

// clearMarker clears the admission marker.
func clearMarker(r *Run) {
	r.Admitted = false
	r.AdmittedAt = time.Time{}
}

// clearClaim clears the claim pair.
func clearClaim(r *Run) {
	r.Token = ""
	r.ClaimedAt = time.Time{}
}

// setWake sets wake_at.
func setWake(r *Run, at time.Time) {
	r.HasWake = true
	r.WakeAt = at
}

// clearWake clears wake_at.
func clearWake(r *Run) {
	r.HasWake = false
	r.WakeAt = time.Time{}
}

// clearPoison clears the poison facts.
func clearPoison(r *Run) {
	r.Poisoned = false
	r.PoisonedAt = time.Time{}
	r.PoisonReason = ""
}
