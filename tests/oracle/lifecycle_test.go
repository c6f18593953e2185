package oracle

import (
	"errors"
	"time"

	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
)

// Differential lifecycle operations. Each applies one write to the database
// first, takes the time the database wrote (see epoch) and applies the
// same write to the model; both must accept it or both must refuse it.

// expectSame fails when exactly one side refused the write.
func (e *diffEnv) expectSame(op string, dbErr, modelErr error) {
	e.rt.Helper()
	if (dbErr == nil) != (modelErr == nil) {
		e.fail("%s: database error %v, model error %v", op, dbErr, modelErr)
	}
}

// expectRefusal fails unless err is nil or one of the refusals.
func (e *diffEnv) expectRefusal(op string, err error, refusals ...error) {
	e.rt.Helper()
	if err == nil {
		return
	}
	for _, r := range refusals {
		if errors.Is(err, r) {
			return
		}
	}
	e.fail("%s: unexpected error %v", op, err)
}

// outcome renders an accepted or refused write for the log.
func outcome(err error) string {
	if err != nil {
		return "refused"
	}
	return "ok"
}

// opCommit commits as a drawn holder with the schedule built by sched; the
// model gets the matching schedule. name is the operation's log name.
func (e *diffEnv) opCommit(name string, db docket.Disposition, model oracle.Schedule) {
	h, ok := e.drawHolder()
	if !ok {
		e.logf("%s: no holder", name)
		return
	}
	run, dbErr := e.client.Commit(e.ctx, docket.CommitRequest{Holder: h.holder(), ExpectedSeq: h.seq, Step: 1, Disposition: db})
	e.expectRefusal(name, dbErr, docket.ErrStaleFence, docket.ErrClaimLost)
	now := e.clock
	if dbErr == nil {
		now = run.UpdatedAt
	}
	modelErr := e.model.Commit(h.lease.runID, h.lease.modelToken, h.seq, model, now)
	e.expectRefusal(name+" (model)", modelErr, oracle.ErrStaleFence, oracle.ErrClaimLost)
	e.logf("%s as %s: %s", name, h, outcome(dbErr))
	e.expectSame(name, dbErr, modelErr)
	if dbErr == nil {
		h.lease.seq = run.CheckpointSeq
	}
}

// opComplete finishes the run (done, failed or cancelled).
func (e *diffEnv) opComplete() {
	status := rapid.SampledFrom([]docket.RunStatus{docket.StatusDone, docket.StatusFailed, docket.StatusCancelled}).Draw(e.rt, "terminal")
	e.opCommit("complete "+string(status), docket.ReleaseTerminal(status),
		oracle.Schedule{Kind: oracle.ReleaseTerminal, Status: oracle.Status(status)})
}

// opYield is the cooperative yield: due now (database clock), marker kept.
func (e *diffEnv) opYield() {
	e.opCommit("yield", docket.ReleaseImmediate(), oracle.Schedule{Kind: oracle.ReleaseImmediate})
}

// opSleep schedules the run at a future logical time, clearing the marker.
func (e *diffEnv) opSleep() {
	d := rapid.SampledFrom([]time.Duration{time.Minute, 20 * time.Minute, 2 * time.Hour}).Draw(e.rt, "sleep")
	at := e.clock.Add(d)
	e.opCommit("sleep until "+e.at(at), docket.ReleaseAt(at), oracle.Schedule{Kind: oracle.ReleaseAt, At: at})
}

// opWait parks the run as waiting, clearing the marker.
func (e *diffEnv) opWait() {
	e.opCommit("wait", docket.ReleaseExternal(), oracle.Schedule{Kind: oracle.ReleaseExternal})
}

// opCheckpoint commits and keeps the claim; the holder goes on with the new
// checkpoint sequence.
func (e *diffEnv) opCheckpoint() {
	e.opCommit("checkpoint", docket.RetainClaim(), oracle.Schedule{Kind: oracle.RetainClaim})
}

// opRelease gives the claim back without a checkpoint: due now (database
// clock), marker kept.
func (e *diffEnv) opRelease() {
	h, ok := e.drawHolder()
	if !ok {
		e.logf("release: no holder")
		return
	}
	released, err := e.client.ReleaseClaim(e.ctx, h.holder())
	if err != nil {
		e.fail("database release: %v", err)
	}
	now := e.clock
	if released {
		if err := e.pool.QueryRow(e.ctx, `select wake_at from docket_runs where run_id = $1`, h.lease.runID).Scan(&now); err != nil {
			e.fail("read wake_at: %v", err)
		}
	}
	want, err := e.model.ReleaseClaim(h.lease.runID, h.lease.modelToken, now)
	if err != nil {
		e.fail("model release: %v", err)
	}
	e.logf("release as %s: released=%t", h, released)
	if released != want {
		e.fail("release: database released=%t, model released=%t", released, want)
	}
}

// opRefresh refreshes the claim. claimed_at only moves forward and the
// database clock is earlier than every logical claim time, so a refresh keeps
// claimed_at; the fence still refuses a stale holder.
func (e *diffEnv) opRefresh() {
	h, ok := e.drawHolder()
	if !ok {
		e.logf("refresh: no holder")
		return
	}
	claimedAt, dbErr := e.client.RefreshClaim(e.ctx, h.holder())
	e.expectRefusal("refresh", dbErr, docket.ErrClaimLost)
	now := e.clock
	if dbErr == nil {
		now = claimedAt
	}
	modelErr := e.model.RefreshClaim(h.lease.runID, h.lease.modelToken, now)
	e.expectRefusal("refresh (model)", modelErr, oracle.ErrClaimLost)
	e.logf("refresh as %s: %s", h, outcome(dbErr))
	e.expectSame("refresh", dbErr, modelErr)
}

// opAbandon abandons the claim with an explicit logical retry time and an
// abandon limit of none or two.
func (e *diffEnv) opAbandon() {
	retry := e.clock.Add(rapid.SampledFrom([]time.Duration{0, time.Minute, 2 * time.Hour}).Draw(e.rt, "retry"))
	limit := rapid.SampledFrom([]int{0, 2}).Draw(e.rt, "max abandons")
	h, ok := e.drawHolder()
	if !ok {
		e.logf("abandon: no holder")
		return
	}
	res, err := e.client.AbandonClaim(e.ctx, docket.AbandonRequest{Holder: h.holder(), ExpectedSeq: h.seq,
		RetryAt: retry, MaxAbandons: limit})
	if err != nil {
		e.fail("database abandon: %v", err)
	}
	now := e.clock
	var dbErr error
	if res.Outcome == docket.AbandonStale {
		dbErr = docket.ErrStaleFence
	} else {
		now = res.Run.UpdatedAt
	}
	modelErr := e.model.AbandonClaim(h.lease.runID, h.lease.modelToken, h.seq, now, retry, limit)
	e.expectRefusal("abandon (model)", modelErr, oracle.ErrStaleFence, oracle.ErrClaimLost)
	e.logf("abandon as %s retry %s max-abandons %d: %s", h, e.at(retry), limit, res.Outcome)
	e.expectSame("abandon", dbErr, modelErr)
}

// opMutate applies an unclaimed transition (MutateRun) to a drawn run,
// preferring runs that satisfy want: running (interrupt or resume, due at
// the database clock, the logical clock or later), waiting or a terminal
// status. The claim is revoked and the marker cleared.
func (e *diffEnv) opMutate(name string, want func(oracle.Run) bool, statuses []docket.RunStatus) {
	r, ok := e.drawRun(name+" run", want)
	if !ok {
		e.logf("%s: no run", name)
		return
	}
	m := docket.Mutation{Status: rapid.SampledFrom(statuses).Draw(e.rt, "status")}
	if m.Status == docket.StatusRunning {
		switch rapid.IntRange(0, 2).Draw(e.rt, "resume wake") {
		case 1:
			m.WakeAt = e.clock
		case 2:
			m.WakeAt = e.clock.Add(30 * time.Minute)
		}
	}
	res, dbErr := e.client.MutateRun(e.ctx, docket.Tenant(r.Scope), r.RunID, func(docket.Run) (docket.Mutation, error) {
		return m, nil
	})
	e.expectRefusal(name, dbErr, docket.ErrInvalidTransition)
	now, wake := e.clock, m.WakeAt
	if dbErr == nil {
		now = res.Run.UpdatedAt
		if wake.IsZero() && res.Run.WakeAt != nil {
			wake = *res.Run.WakeAt
		}
	}
	modelErr := e.model.MutateRun(r.RunID, oracle.Status(m.Status), wake, now)
	e.expectRefusal(name+" (model)", modelErr, oracle.ErrInvalidState)
	e.logf("%s %s -> %s wake %s: %s", name, r.RunID, m.Status, e.wakeLabel(m.WakeAt), outcome(dbErr))
	e.expectSame(name, dbErr, modelErr)
}

// wakeLabel renders the requested wake of a mutation.
func (e *diffEnv) wakeLabel(t time.Time) string {
	if t.IsZero() {
		return "db-now"
	}
	return e.at(t)
}

// opResume wakes a waiting run (falling back to any run).
func (e *diffEnv) opResume() {
	e.opMutate("resume", func(r oracle.Run) bool { return r.Status == oracle.StatusWaiting },
		[]docket.RunStatus{docket.StatusRunning})
}

// opSignal applies a random unclaimed transition to an unfinished run.
func (e *diffEnv) opSignal() {
	e.opMutate("signal", func(r oracle.Run) bool { return r.Status.Unfinished() },
		[]docket.RunStatus{docket.StatusRunning, docket.StatusWaiting, docket.StatusCancelled})
}

// opRetryPoisoned revives a poisoned run (falling back to any run, which
// both sides refuse).
func (e *diffEnv) opRetryPoisoned() {
	r, ok := e.drawRun("poisoned run", func(r oracle.Run) bool { return r.Poisoned })
	if !ok {
		e.logf("retry poisoned: no run")
		return
	}
	run, dbErr := e.client.RetryPoisonedRun(e.ctx, docket.Tenant(r.Scope), r.RunID)
	e.expectRefusal("retry poisoned", dbErr, docket.ErrInvalidTransition)
	now := e.clock
	if dbErr == nil {
		now = *run.WakeAt
	}
	modelErr := e.model.RetryPoisonedRun(r.RunID, now)
	e.expectRefusal("retry poisoned (model)", modelErr, oracle.ErrInvalidState)
	e.logf("retry poisoned %s: %s", r.RunID, outcome(dbErr))
	e.expectSame("retry poisoned", dbErr, modelErr)
}
