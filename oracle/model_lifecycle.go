package oracle

import (
	"slices"
	"time"
)

// InsertRun inserts a running run of scope due at wakeAt. The internal id
// increases on every insert; the scope's partition (and its ring position)
// is created on first use; unfinished_count grows by one. The run is
// unadmitted (queued once due). A parked partition is parked no later than
// wakeAt afterwards: the model does not know the database clock of the
// write, so it never treats the new run as due at the write (the database
// unparks at once when it is), which is exact for wake times after the
// database clock. In parked mode an insert into an unpaused partition that
// had no unfinished run parks it until wakeAt, as the insert trigger does.
func (m *Model) InsertRun(scope, runID string, wakeAt time.Time) error {
	if runID == "" {
		return opError("InsertRun", ErrInvalidArgument, "empty run id")
	}
	if _, dup := m.byRunID[runID]; dup {
		return opError("InsertRun", ErrDuplicateRun, "run %q", runID)
	}
	p := m.partitionFor(scope)
	m.nextID++
	r := &Run{ID: m.nextID, RunID: runID, Scope: scope, Status: StatusRunning, HasWake: true, WakeAt: wakeAt}
	m.runs = append(m.runs, r)
	m.byRunID[runID] = r
	empty := p.Unfinished == 0
	p.Unfinished++
	if m.park && empty && !p.Paused {
		// Park on write: the partition held nothing, and the new run is not
		// due at the write.
		p.Parked, p.ParkedUntil = true, wakeAt
		return nil
	}
	m.wakeByWrite(r, time.Time{})
	return nil
}

// NewRun is one run of an InsertRuns batch.
type NewRun struct {
	Scope  string    // scope key ("" is tenantless)
	RunID  string    // public identity
	WakeAt time.Time // due time
}

// InsertRuns inserts a batch of running runs as one statement does. The batch
// is all or nothing: an empty run id, or one that exists or repeats within
// the batch, inserts nothing. The partitions the batch needs that do not exist
// yet are created first, in ascending scope-key order (the statement trigger
// creates them sorted, so concurrent multi-tenant inserts lock alike), and so
// get their ring positions in that order, not in input order. The runs then
// get increasing internal ids in input order, as InsertRun would.
func (m *Model) InsertRuns(runs []NewRun) error {
	seen := map[string]bool{}
	var scopes []string
	for _, r := range runs {
		switch _, dup := m.byRunID[r.RunID]; {
		case r.RunID == "":
			return opError("InsertRuns", ErrInvalidArgument, "empty run id")
		case dup || seen[r.RunID]:
			return opError("InsertRuns", ErrDuplicateRun, "run %q", r.RunID)
		}
		seen[r.RunID] = true
		if _, ok := m.parts[r.Scope]; !ok && !slices.Contains(scopes, r.Scope) {
			scopes = append(scopes, r.Scope)
		}
	}
	slices.Sort(scopes)
	for _, s := range scopes {
		m.partitionFor(s)
	}
	for _, r := range runs {
		if err := m.InsertRun(r.Scope, r.RunID, r.WakeAt); err != nil {
			return err
		}
	}
	return nil
}

// RefreshClaim refreshes the claim held with token: claimed_at only moves
// forward (to now when now is later). Claim and marker are kept.
func (m *Model) RefreshClaim(runID, token string, now time.Time) error {
	r, err := m.holder("RefreshClaim", runID, token)
	if err != nil {
		return err
	}
	if now.After(r.ClaimedAt) {
		r.ClaimedAt = now
	}
	return nil
}

// ReleaseClaim releases the claim held with token immediately: claim
// cleared, wake_at = now, marker kept (the run stays admitted-ready). It
// reports whether this call released the claim. It is idempotent: when token
// does not hold the claim (already released, stolen or finished) nothing
// changes and it returns false and no error; a missing run is ErrNotFound.
func (m *Model) ReleaseClaim(runID, token string, now time.Time) (bool, error) {
	r, err := m.lookup("ReleaseClaim", runID)
	if err != nil {
		return false, err
	}
	if token == "" || r.Token != token {
		return false, nil
	}
	clearClaim(r)
	setWake(r, now)
	return true, nil
}

// Commit records a checkpoint by the claim holder: token and expected
// checkpoint_seq are fenced (*FenceError with ErrClaimLost or ErrStaleFence),
// checkpoint_seq increases by one, claim_attempts, claim_abandons and poison
// facts are reset, then the schedule applies:
//
//   - RetainClaim: claim kept, claimed_at refreshed forward; marker kept.
//   - ReleaseImmediate (cooperative yield): claim cleared, wake = now;
//     marker kept.
//   - ReleaseAt: claim cleared, wake = sched.At; marker cleared. The model
//     does not reinterpret an At that is not in the future.
//   - ReleaseExternal: status waiting, claim and wake cleared; marker
//     cleared.
//   - ReleaseTerminal: status sched.Status (done, failed or cancelled),
//     claim and wake cleared; marker cleared.
func (m *Model) Commit(runID, token string, expectedSeq int64, sched Schedule, now time.Time) error {
	r, err := m.holder("Commit", runID, token)
	if err != nil {
		return err
	}
	if r.CheckpointSeq != expectedSeq {
		return &FenceError{Op: "Commit", RunID: runID, Err: ErrStaleFence}
	}
	switch sched.Kind {
	case RetainClaim, ReleaseImmediate, ReleaseAt, ReleaseExternal:
	case ReleaseTerminal:
		if !sched.Status.Terminal() {
			return opError("Commit", ErrInvalidArgument, "terminal schedule with status %q", sched.Status)
		}
	default:
		return opError("Commit", ErrInvalidArgument, "unknown schedule kind %d", sched.Kind)
	}
	r.CheckpointSeq++
	r.Attempts = 0
	r.Abandons = 0
	clearPoison(r)
	switch sched.Kind {
	case RetainClaim:
		if now.After(r.ClaimedAt) {
			r.ClaimedAt = now
		}
	case ReleaseImmediate:
		clearClaim(r)
		setWake(r, now)
	case ReleaseAt:
		clearClaim(r)
		clearMarker(r)
		setWake(r, sched.At)
	case ReleaseExternal:
		clearClaim(r)
		clearMarker(r)
		clearWake(r)
		m.setStatus(r, StatusWaiting)
	case ReleaseTerminal:
		clearClaim(r)
		clearMarker(r)
		clearWake(r)
		m.setStatus(r, sched.Status)
	}
	return nil
}

// AbandonClaim is a host-incompatible abandon by the claim holder (token and
// checkpoint_seq fenced): claim and marker cleared, claim_abandons + 1; when
// maxAbandons is positive and the abandons reach it the run is poisoned with
// reason max_claim_abandons_exceeded, otherwise (always when maxAbandons <=
// 0, meaning no limit) it is rescheduled at retryAt. claim_attempts and
// checkpoint_seq are unchanged.
func (m *Model) AbandonClaim(runID, token string, expectedSeq int64, now, retryAt time.Time, maxAbandons int) error {
	r, err := m.holder("AbandonClaim", runID, token)
	if err != nil {
		return err
	}
	if r.CheckpointSeq != expectedSeq {
		return &FenceError{Op: "AbandonClaim", RunID: runID, Err: ErrStaleFence}
	}
	clearClaim(r)
	clearMarker(r)
	r.Abandons++
	if maxAbandons > 0 && r.Abandons >= maxAbandons {
		poison(r, now, PoisonMaxClaimAbandons)
		return nil
	}
	setWake(r, retryAt)
	return nil
}

// MutateRun is an unclaimed transition (MutateRun / signal) of an
// unfinished run to status: any claim is revoked and the marker cleared in
// the same change. Status running sets wake_at = wakeAt (pass now for an
// immediate interrupt or resume), so the run is queued; waiting parks it;
// done, failed or cancelled finish it and clear poison facts. A terminal run,
// or a poisoned run moved to a non-terminal status, returns ErrInvalidState
// (RetryPoisonedRun revives poisoned runs).
func (m *Model) MutateRun(runID string, status Status, wakeAt, now time.Time) error {
	r, err := m.lookup("MutateRun", runID)
	if err != nil {
		return err
	}
	switch {
	case !status.Unfinished() && !status.Terminal():
		return opError("MutateRun", ErrInvalidArgument, "unknown status %q", status)
	case !r.Status.Unfinished():
		return opError("MutateRun", ErrInvalidState, "run %q is already %s", runID, r.Status)
	case r.Poisoned && !status.Terminal():
		return opError("MutateRun", ErrInvalidState, "run %q is poisoned", runID)
	}
	before := *r
	defer m.wakeByUpdate(before, r, now)
	clearClaim(r)
	clearMarker(r)
	clearWake(r)
	if status == StatusRunning {
		setWake(r, wakeAt)
	} else {
		clearPoison(r)
	}
	m.setStatus(r, status)
	return nil
}

// Signal is the immediate unclaimed signal (interrupt or resume):
// MutateRun(runID, StatusRunning, now, now).
func (m *Model) Signal(runID string, now time.Time) error {
	return m.MutateRun(runID, StatusRunning, now, now)
}

// Cancel is the unclaimed cancel signal, allowed on poisoned runs:
// MutateRun(runID, StatusCancelled, now, now).
func (m *Model) Cancel(runID string, now time.Time) error {
	return m.MutateRun(runID, StatusCancelled, now, now)
}

// RetryPoisonedRun makes a poisoned run runnable again: poison facts
// cleared, claim_attempts and claim_abandons reset to 0, wake_at = now, the
// marker stays NULL (the run is queued again). Other runs return
// ErrInvalidState.
func (m *Model) RetryPoisonedRun(runID string, now time.Time) error {
	r, err := m.lookup("RetryPoisonedRun", runID)
	if err != nil {
		return err
	}
	if !r.Poisoned {
		return opError("RetryPoisonedRun", ErrInvalidState, "run %q is not poisoned", runID)
	}
	before := *r
	defer m.wakeByUpdate(before, r, now)
	clearPoison(r)
	r.Attempts = 0
	r.Abandons = 0
	setWake(r, now)
	return nil
}

// Wake wakes a waiting run: status running, wake_at = now, marker stays
// NULL, so the run is queued. Other runs return ErrInvalidState.
func (m *Model) Wake(runID string, now time.Time) error {
	r, err := m.lookup("Wake", runID)
	if err != nil {
		return err
	}
	if r.Status != StatusWaiting {
		return opError("Wake", ErrInvalidState, "run %q is %s, not waiting", runID, r.Status)
	}
	before := *r
	defer m.wakeByUpdate(before, r, now)
	setWake(r, now)
	m.setStatus(r, StatusRunning)
	return nil
}

// lookup finds a run or returns ErrNotFound.
func (m *Model) lookup(op, runID string) (*Run, error) {
	r, ok := m.byRunID[runID]
	if !ok {
		return nil, opError(op, ErrNotFound, "run %q", runID)
	}
	return r, nil
}

// holder finds a run claimed under exactly token, else a *FenceError with
// ErrClaimLost.
func (m *Model) holder(op, runID, token string) (*Run, error) {
	r, err := m.lookup(op, runID)
	if err != nil {
		return nil, err
	}
	if token == "" || r.Token != token {
		return nil, &FenceError{Op: op, RunID: runID, Err: ErrClaimLost}
	}
	return r, nil
}
