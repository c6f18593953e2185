package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/jobcompleter"
)

// Holder identifies the holder of one claim: the run, its scope and the exact
// claim token the claim call handed out. Every holder write matches the exact
// token, so a holder whose claim was released, stolen or finished changes
// nothing.
//
// A typical lifecycle, given a lease from ClaimDue:
//
//	h, seq := lease.Holder(), lease.CheckpointSeq
//	// Keep the claim alive while working; stop when it is lost.
//	if _, err := client.RefreshClaim(ctx, h); errors.Is(err, docket.ErrClaimLost) {
//		return err
//	}
//	// Checkpoint and keep the claim, then finish.
//	run, err := client.Commit(ctx, docket.CommitRequest{Holder: h, ExpectedSeq: seq,
//		Step: 1, State: next, Disposition: docket.RetainClaim()})
//	if err != nil {
//		return err // ErrStaleFence: another holder owns the run now
//	}
//	_, err = client.Commit(ctx, docket.CommitRequest{Holder: h, ExpectedSeq: run.CheckpointSeq,
//		Step: 2, State: final, Disposition: docket.ReleaseTerminal(docket.StatusDone)})
//
// A holder that cannot run the work on its host calls AbandonClaim; one that
// stops early without a checkpoint calls ReleaseClaim; one that wants to give
// others a turn commits with ReleaseImmediate and keeps its admission.
type Holder struct {
	// Scope is the run's owner.
	Scope Scope
	// RunID is the claimed run.
	RunID string
	// Token is the claim token of the lease.
	Token uuid.UUID
}

// holderKey validates h and returns its scope key.
func (c *Client) holderKey(h Holder) (string, error) {
	scopeKey, err := c.runKey(h.Scope, h.RunID)
	if err != nil {
		return "", err
	}
	if h.Token == uuid.Nil {
		return "", invalidArgument("claim token is the nil UUID")
	}
	return scopeKey, nil
}

// RefreshClaim renews the holder's claim and returns its claimed_at, which
// only moves forward: greatest(claimed_at, now). The claim and the admission
// marker are kept. A holder that no longer has the claim gets ErrClaimLost
// and changes nothing.
func (c *Client) RefreshClaim(ctx context.Context, h Holder) (time.Time, error) {
	return timed(ctx, c.telemetry, opRefreshClaim, func() (time.Time, error) {
		scopeKey, err := c.holderKey(h)
		if err != nil {
			return time.Time{}, err
		}
		claimedAt, err := c.queries.RefreshClaim(ctx, dbgen.RefreshClaimParams{
			ScopeKey: scopeKey, RunID: h.RunID, ClaimToken: h.Token,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return time.Time{}, explainFenceMiss(ctx, c.queries, scopeKey, h.RunID,
				fmt.Errorf("%w: run %s", ErrClaimLost, quoteID(h.RunID)))
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("docket: refresh claim: %w", err)
		}
		return *claimedAt, nil
	})
}

// ReleaseClaim gives the claim back at once without a checkpoint: the claim
// is cleared, the run is due now and keeps its admission marker, so it is
// admitted-ready and served again before any promotion in its tenant. It
// reports whether this call released the claim; false means the token no
// longer holds it (already released, stolen or finished) and nothing changed,
// which makes the call idempotent. A missing run is ErrNotFound.
func (c *Client) ReleaseClaim(ctx context.Context, h Holder) (bool, error) {
	return timedStale(ctx, c.telemetry, opReleaseClaim, func() (bool, bool, error) {
		scopeKey, err := c.holderKey(h)
		if err != nil {
			return false, false, err
		}
		released, err := c.queries.ReleaseClaim(ctx, dbgen.ReleaseClaimParams{
			ScopeKey: scopeKey, RunID: h.RunID, ClaimToken: h.Token,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			if err := explainFenceMiss(ctx, c.queries, scopeKey, h.RunID, nil); err != nil {
				return false, false, err
			}
			return false, true, nil
		}
		if err != nil {
			return false, false, fmt.Errorf("docket: release claim: %w", err)
		}
		c.announceIfDue(ctx, c.queries, released)
		return true, false, nil
	})
}

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
			fmt.Errorf("%w: run %s at checkpoint %d", ErrStaleFence, quoteID(req.Holder.RunID), req.ExpectedSeq))
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

// Default backoff of AbandonClaim: the n-th abandon (counting from zero)
// reschedules after min(base * 2^n, cap).
const (
	// DefaultAbandonBackoffBase is the backoff after a run's first abandon.
	DefaultAbandonBackoffBase = time.Second
	// DefaultAbandonBackoffCap bounds the abandon backoff.
	DefaultAbandonBackoffCap = 10 * time.Minute
)

// AbandonRequest gives back a claim the holder cannot run on its host.
type AbandonRequest struct {
	// Holder is the claim holder; its token must be the run's exact token.
	Holder Holder
	// ExpectedSeq is the checkpoint_seq the holder last saw.
	ExpectedSeq int64
	// RetryAt, when non-zero, is when the run is due again instead of the
	// backoff; it must be a time PostgreSQL's timestamptz can hold.
	RetryAt time.Time
	// BackoffBase is the first backoff; 0 means DefaultAbandonBackoffBase.
	BackoffBase time.Duration
	// BackoffCap bounds the backoff; 0 means DefaultAbandonBackoffCap.
	BackoffCap time.Duration
	// MaxAbandons poisons the run (max_claim_abandons_exceeded) when this
	// abandon brings its abandon count to MaxAbandons; 0 never poisons.
	MaxAbandons int
}

// AbandonOutcome is what AbandonClaim did.
type AbandonOutcome string

// The outcomes of AbandonClaim.
const (
	// AbandonRescheduled: the run is due again at RetryAt or after the backoff.
	AbandonRescheduled AbandonOutcome = "rescheduled"
	// AbandonPoisoned: the abandon limit was reached; the run waits for
	// RetryPoisonedRun.
	AbandonPoisoned AbandonOutcome = "poisoned"
	// AbandonStale: the token or checkpoint sequence is outdated; nothing
	// changed.
	AbandonStale AbandonOutcome = "stale"
)

// AbandonResult reports an AbandonClaim.
type AbandonResult struct {
	// Outcome is rescheduled, poisoned or stale.
	Outcome AbandonOutcome
	// Run is the run after the abandon; the zero Run when stale.
	Run Run
}

// AbandonClaim gives back a claim whose work is incompatible with the
// holder's host, fenced on the exact token and ExpectedSeq. The claim and the
// admission marker are cleared in the same statement, freeing the tenant's
// slot, and the abandon count grows by one. The run is rescheduled at RetryAt
// or after min(base * 2^abandons, cap) (abandons counted before this one), or
// poisoned when MaxAbandons is reached. A stale holder gets AbandonStale and
// changes nothing; a missing run is ErrNotFound.
func (c *Client) AbandonClaim(ctx context.Context, req AbandonRequest) (AbandonResult, error) {
	return timedStale(ctx, c.telemetry, opAbandonClaim, func() (AbandonResult, bool, error) {
		scopeKey, err := c.holderKey(req.Holder)
		if err != nil {
			return AbandonResult{}, false, err
		}
		base, limit := req.BackoffBase, req.BackoffCap
		if base == 0 {
			base = DefaultAbandonBackoffBase
		}
		if limit == 0 {
			limit = DefaultAbandonBackoffCap
		}
		switch {
		case base < 0 || limit < 0 || base > limit:
			return AbandonResult{}, false, invalidArgument("abandon backoff base %s and cap %s need 0 < base <= cap", base, limit)
		case req.MaxAbandons < 0 || req.MaxAbandons > math.MaxInt32:
			return AbandonResult{}, false, invalidArgument("max abandons %d is outside 0..%d", req.MaxAbandons, math.MaxInt32)
		case req.ExpectedSeq < 0:
			return AbandonResult{}, false, invalidArgument("expected checkpoint sequence %d is negative", req.ExpectedSeq)
		}
		if !req.RetryAt.IsZero() {
			if err := requireStorableTime("abandon RetryAt", req.RetryAt); err != nil {
				return AbandonResult{}, false, err
			}
		}
		params := dbgen.AbandonClaimParams{
			MaxAbandons:        int32(req.MaxAbandons),
			BackoffBaseSeconds: base.Seconds(),
			BackoffCapSeconds:  limit.Seconds(),
			ScopeKey:           scopeKey,
			RunID:              req.Holder.RunID,
			ClaimToken:         req.Holder.Token,
			ExpectedSeq:        req.ExpectedSeq,
		}
		if !req.RetryAt.IsZero() {
			params.RetryAt = &req.RetryAt
		}
		row, err := c.queries.AbandonClaim(ctx, params)
		if errors.Is(err, pgx.ErrNoRows) {
			if err := explainFenceMiss(ctx, c.queries, scopeKey, req.Holder.RunID, nil); err != nil {
				return AbandonResult{}, false, err
			}
			return AbandonResult{Outcome: AbandonStale}, true, nil
		}
		if err != nil {
			return AbandonResult{}, false, fmt.Errorf("docket: abandon claim: %w", err)
		}
		c.announceIfDue(ctx, c.queries, row.DocketRun)
		outcome := AbandonRescheduled
		if row.DocketRun.PoisonedAt != nil {
			outcome = AbandonPoisoned
		}
		c.telemetry.abandoned(ctx, outcome, !req.RetryAt.IsZero(), row.MarkerCleared)
		return AbandonResult{Outcome: outcome, Run: runWithPhase(row.DocketRun, row.Phase)}, false, nil
	})
}

// scopedCommit is a commit request with its holder's scope key, which
// holderKey validated, and a plan that may share a statement
// (commitPlan.shared).
type scopedCommit struct {
	req      CommitRequest
	scopeKey string
}

// committedSeq is a run's new checkpoint after a commit of commitRuns.
type committedSeq struct {
	seq  int64
	step int
}

// commitRuns writes the commits of batch, each shared, in one CommitRuns
// statement and returns each outcome as Commit would report it, or the
// statement's error when it failed as a whole. Each commit counts as one
// commit store call of the statement's duration, and its marker release as
// Commit counts it; a failed statement counts nothing, since each of its
// commits is retried alone.
func (c *Client) commitRuns(ctx context.Context, batch []scopedCommit) ([]jobcompleter.Result[committedSeq], error) {
	start := time.Now()
	n := len(batch)
	params := dbgen.CommitRunsParams{
		ScopeKeys: make([]string, n), RunIds: make([]string, n), ClaimTokens: make([]string, n),
		ExpectedSeqs: make([]int64, n), Steps: make([]int32, n), States: make([]string, n),
		CheckpointTypes: make([]string, n), Statuses: make([]string, n), Schedules: make([]string, n),
		WakeAts: make([]time.Time, n), WakeDelaysUs: make([]int64, n),
		AttemptChanges: make([]string, n), ErrorKinds: make([]string, n), ErrorTexts: make([]string, n),
	}
	for i, q := range batch {
		req := q.req
		params.ScopeKeys[i], params.RunIds[i], params.ClaimTokens[i] = q.scopeKey, req.Holder.RunID, req.Holder.Token.String()
		params.ExpectedSeqs[i], params.Steps[i], params.States[i] = req.ExpectedSeq, int32(req.Step), string(req.State)
		params.CheckpointTypes[i], params.Statuses[i] = req.CheckpointType, string(req.Disposition.status)
		params.Schedules[i], params.WakeAts[i] = req.Disposition.kind, req.Disposition.at
		params.WakeDelaysUs[i], params.AttemptChanges[i] = req.Disposition.delay.Microseconds(), req.Attempt.sql()
		if req.Failure != nil {
			params.ErrorKinds[i], params.ErrorTexts[i] = req.Failure.Kind, errorText(req.Failure.Error)
		}
	}
	rows, err := c.queries.CommitRuns(ctx, params)
	if err != nil {
		return nil, err
	}
	written := make(map[uuid.UUID]dbgen.CommitRunsRow, len(rows))
	for _, row := range rows {
		written[row.ClaimToken] = row
	}
	results := make([]jobcompleter.Result[committedSeq], n)
	for i, q := range batch {
		req, res := q.req, &results[i]
		if row, ok := written[req.Holder.Token]; ok {
			res.Value = committedSeq{seq: row.CheckpointSeq, step: int(row.Step)}
			c.telemetry.committed(ctx, req.Disposition, row.MarkerCleared)
		} else {
			res.Err = explainFenceMiss(ctx, c.queries, q.scopeKey, req.Holder.RunID,
				fmt.Errorf("%w: run %s at checkpoint %d", ErrStaleFence, quoteID(req.Holder.RunID), req.ExpectedSeq))
		}
		c.telemetry.recordStore(ctx, opCommit, start, res.Err, false)
	}
	return results, nil
}

// commitApplied reports whether the run's row shows req as its latest
// commit (see the CommitApplied query for what identifies it). A worker asks
// when req met its fence after an earlier attempt of it failed without an
// answer: the earlier attempt may have committed.
func (c *Client) commitApplied(ctx context.Context, req CommitRequest) (bool, error) {
	scopeKey, err := c.holderKey(req.Holder)
	if err != nil {
		return false, err
	}
	params := dbgen.CommitAppliedParams{
		ScopeKey:    scopeKey,
		RunID:       req.Holder.RunID,
		ExpectedSeq: req.ExpectedSeq,
		Step:        int32(req.Step),
		Schedule:    req.Disposition.kind,
		ClaimToken:  req.Holder.Token,
		Status:      string(req.Disposition.status),
	}
	if req.CheckpointType != "" {
		params.CheckpointType = &req.CheckpointType
	}
	if req.State != nil {
		state := string(req.State)
		params.State = &state
	}
	applied, err := c.queries.CommitApplied(ctx, params)
	if err != nil {
		return false, fmt.Errorf("docket: checking whether a commit was applied: %w", err)
	}
	return applied, nil
}
