package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Disposition says what happens to a run after a commit. Build one with
// RetainClaim, ReleaseImmediate, ReleaseAt, ReleaseExternal or
// ReleaseTerminal; the zero Disposition is invalid.
type Disposition struct {
	kind   string // the CommitRun schedule: retain, immediate, at, after, external, terminal
	at     time.Time
	delay  time.Duration // of "after": the wake time is the commit's database time plus delay
	status RunStatus
}

// RetainClaim keeps the claim (claimed_at refreshed) and the admission: the
// holder goes on working.
func RetainClaim() Disposition { return Disposition{kind: "retain", status: StatusRunning} }

// ReleaseImmediate is the holder's cooperative yield: the claim is cleared,
// the run is due now and keeps its admission, so it stays admitted-ready.
func ReleaseImmediate() Disposition { return Disposition{kind: "immediate", status: StatusRunning} }

// ReleaseAt clears the claim and the admission and makes the run due at t. On
// waking, the run is queued and must be promoted again under its tenant's
// cap; a t that is not in the future makes it queued at once. A zero t, or
// one PostgreSQL's timestamptz cannot hold, makes Commit return
// ErrInvalidArgument.
func ReleaseAt(t time.Time) Disposition { return Disposition{kind: "at", at: t, status: StatusRunning} }

// releaseAfter is ReleaseAt the commit's database time plus d, so the stored
// wake time is exactly the commit time (updated_at) plus d. Any Duration
// stays inside timestamptz's range.
func releaseAfter(d time.Duration) Disposition {
	return Disposition{kind: "after", delay: d, status: StatusRunning}
}

// ReleaseExternal parks the run as waiting for an external event (resumed
// through MutateRun): claim, wake time and admission are cleared.
func ReleaseExternal() Disposition { return Disposition{kind: "external", status: StatusWaiting} }

// ReleaseTerminal finishes the run with status done, failed or cancelled:
// claim, wake time and admission are cleared and finished_at is set.
func ReleaseTerminal(status RunStatus) Disposition {
	return Disposition{kind: "terminal", status: status}
}

// validate checks the schedule's own arguments.
func (s Disposition) validate() error {
	switch s.kind {
	case "retain", "immediate", "after", "external":
		return nil
	case "at":
		if s.at.IsZero() {
			return invalidArgument("ReleaseAt needs a non-zero time")
		}
		return requireStorableTime("ReleaseAt time", s.at)
	case "terminal":
		if !s.status.Terminal() {
			return invalidArgument("ReleaseTerminal needs done, failed or cancelled, not %q", s.status)
		}
		return nil
	}
	return invalidArgument("commit needs a schedule (RetainClaim, ReleaseImmediate, ReleaseAt, ReleaseExternal or ReleaseTerminal)")
}

// CommitRequest is one checkpoint by a claim holder.
type CommitRequest struct {
	// Holder is the claim holder; its token must be the run's exact token.
	Holder Holder
	// ExpectedSeq is the checkpoint_seq the holder last saw: the lease's, or
	// the one returned by its previous commit. The commit stores ExpectedSeq+1.
	ExpectedSeq int64
	// Step is the run's new step, >= 0.
	Step int
	// State is the new run document (valid JSON, at most MaxStateBytes); nil
	// keeps the current one.
	State json.RawMessage
	// CheckpointType names this checkpoint (identifier rules, see
	// MaxIdentifierBytes); "" stores none.
	CheckpointType string
	// Disposition is what happens to the run after the commit.
	Disposition Disposition
	// Attempt is what the commit does to the run's handler-attempt counter
	// (Run.Attempt). The zero AttemptReset restarts it, since a commit is
	// progress; AttemptKeep leaves it; AttemptCount adds one.
	Attempt AttemptChange
	// Failure, allowed only with AttemptCount, appends the failed attempt to
	// the run's error history in the same statement (the oldest entry goes
	// beyond MaxRunErrors); nil appends nothing.
	Failure *AttemptFailure
}

// Commit stores a holder's checkpoint and applies its schedule in one
// statement fenced on the exact claim token and ExpectedSeq. A commit is
// progress: the claim attempt and abandon counters restart at zero, and the
// handler-attempt counter changes as req.Attempt says. Only
// RetainClaim and ReleaseImmediate keep the admission marker. An invalid
// request returns ErrInvalidArgument; a mismatched token or sequence returns
// ErrStaleFence; both change nothing. It returns the committed run.
func (c *Client) Commit(ctx context.Context, req CommitRequest) (Run, error) {
	return timed(ctx, c.telemetry, opCommit, func() (Run, error) {
		row, err := c.commit(ctx, c.queries, req)
		if err != nil {
			return Run{}, err
		}
		c.telemetry.committed(ctx, req.Disposition, row.MarkerCleared)
		c.announceIfDue(ctx, c.queries, row.DocketRun)
		return runWithPhase(row.DocketRun, row.Phase), nil
	})
}

// CommitTx is Commit inside the caller's transaction, so a holder's
// checkpoint and its own writes commit or roll back together: after a
// rollback the run is exactly as before, still claimed by the holder, whose
// fence (token and ExpectedSeq) is unchanged. The admission-release counter
// is not recorded, since the transaction's outcome is the caller's; the
// store-call metric is.
func (c *Client) CommitTx(ctx context.Context, tx pgx.Tx, req CommitRequest) (Run, error) {
	return timed(ctx, c.telemetry, opCommit, func() (Run, error) {
		q, err := c.withTx(tx)
		if err != nil {
			return Run{}, err
		}
		row, err := c.commit(ctx, q, req)
		if err != nil {
			return Run{}, err
		}
		c.announceIfDue(ctx, q, row.DocketRun)
		return runWithPhase(row.DocketRun, row.Phase), nil
	})
}

// commit validates req and runs the fenced commit statement on q.
func (c *Client) commit(ctx context.Context, q *dbgen.Queries, req CommitRequest) (dbgen.CommitRunRow, error) {
	scopeKey, err := c.holderKey(req.Holder)
	if err != nil {
		return dbgen.CommitRunRow{}, err
	}
	if err := req.Disposition.validate(); err != nil {
		return dbgen.CommitRunRow{}, err
	}
	if req.ExpectedSeq < 0 {
		return dbgen.CommitRunRow{}, invalidArgument("expected checkpoint sequence %d is negative", req.ExpectedSeq)
	}
	if req.Step < 0 || req.Step > math.MaxInt32 {
		return dbgen.CommitRunRow{}, invalidArgument("step %d is outside 0..%d", req.Step, math.MaxInt32)
	}
	failure, err := req.failure()
	if err != nil {
		return dbgen.CommitRunRow{}, err
	}
	params := dbgen.CommitRunParams{
		Step:          int32(req.Step),
		Status:        string(req.Disposition.status),
		Schedule:      req.Disposition.kind,
		AttemptChange: req.Attempt.sql(),
		ScopeKey:      scopeKey,
		RunID:         req.Holder.RunID,
		ClaimToken:    req.Holder.Token,
		ExpectedSeq:   req.ExpectedSeq,
	}
	if failure != nil {
		params.ErrorKind, params.ErrorText = &failure.Kind, &failure.Error
	}
	if req.State != nil {
		if err := validateState(req.State); err != nil {
			return dbgen.CommitRunRow{}, err
		}
		state := string(req.State)
		params.State = &state
	}
	if req.CheckpointType != "" {
		if err := validateIdentifier("checkpoint type", req.CheckpointType); err != nil {
			return dbgen.CommitRunRow{}, err
		}
		params.CheckpointType = &req.CheckpointType
	}
	switch req.Disposition.kind {
	case "at":
		params.WakeAt = &req.Disposition.at
	case "after":
		delay := req.Disposition.delay.Microseconds()
		params.WakeDelayUs = &delay
	}
	row, err := q.CommitRun(ctx, params)
	if errors.Is(err, pgx.ErrNoRows) {
		return dbgen.CommitRunRow{}, explainFenceMiss(ctx, q, scopeKey, req.Holder.RunID,
			fmt.Errorf("%w: run %q at checkpoint %d", ErrStaleFence, req.Holder.RunID, req.ExpectedSeq))
	}
	if err != nil {
		return dbgen.CommitRunRow{}, mapRunWriteError("commit", err)
	}
	return row, nil
}

// failure validates req's attempt change and failure and returns the
// failure as stored (its text made storable), or nil for none.
func (req CommitRequest) failure() (*AttemptFailure, error) {
	switch {
	case !req.Attempt.valid():
		return nil, invalidArgument("attempt change %d is not AttemptReset, AttemptKeep or AttemptCount", req.Attempt)
	case req.Failure == nil:
		return nil, nil
	case req.Attempt != AttemptCount:
		return nil, invalidArgument("a commit records a failure only with AttemptCount")
	case !validFailureKind(req.Failure.Kind):
		return nil, invalidArgument("failure kind %q is not error, panic, no_result or invalid_result", req.Failure.Kind)
	}
	return &AttemptFailure{Kind: req.Failure.Kind, Error: errorText(req.Failure.Error)}, nil
}
