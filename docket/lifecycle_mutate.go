package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Mutation is the decision of a MutateRun decide function. The zero Mutation
// (empty Status) changes nothing.
type Mutation struct {
	// Status is the run's new status; "" means no change.
	Status RunStatus
	// State replaces the run document when non-nil (valid JSON, at most
	// MaxStateBytes).
	State json.RawMessage
	// WakeAt is when a running run is due; zero means now. It must be zero
	// for any other status, and a time PostgreSQL's timestamptz can hold.
	WakeAt time.Time
}

// MutateResult reports a MutateRun.
type MutateResult struct {
	// Run is the run after the call (unchanged when Changed is false).
	Run Run
	// Changed reports whether the decision was written.
	Changed bool
}

// MutateRun serializes a read-decide-write of an unclaimed transition (a
// signal such as interrupt, resume or cancel). It locks the run, passes its
// current view to decide, and writes the returned Mutation in the same
// transaction. decide must do no I/O and return quickly: it runs while the
// row is locked against claim calls and holders. A decide error aborts the
// call (wrapped, nothing written).
//
// The write revokes any claim and clears the admission marker: a run that
// stays or becomes running re-enters its tenant's FIFO as queued, due at
// WakeAt or now. A terminal run cannot change (RetryRun sends a failed or
// cancelled one back to work), and a poisoned run can only be finished
// (RetryPoisonedRun revives it); both return ErrInvalidTransition.
func (c *store) MutateRun(ctx context.Context, scope Scope, runID string, decide func(Run) (Mutation, error)) (MutateResult, error) {
	return c.mutateRun(ctx, opMutateRun, scope, runID, decide)
}

// mutateRun is MutateRun, timed as store operation op.
func (c *store) mutateRun(ctx context.Context, op string, scope Scope, runID string, decide func(Run) (Mutation, error)) (MutateResult, error) {
	return timed(ctx, c.telemetry, op, func() (MutateResult, error) {
		scopeKey, err := c.runKey(scope, runID)
		if err != nil {
			return MutateResult{}, err
		}
		if decide == nil {
			return MutateResult{}, invalidArgument("nil decide function")
		}
		var result MutateResult
		var markerCleared bool
		err = c.inTx(ctx, func(q *dbgen.Queries) error {
			row, err := lockRun(ctx, q, scopeKey, runID)
			if err != nil {
				return err
			}
			current := runWithPhase(row.DocketRun, row.Phase)
			m, err := decide(current)
			if err != nil {
				return fmt.Errorf("docket: mutate run decision: %w", err)
			}
			if m.Status == "" {
				result = MutateResult{Run: current}
				return nil
			}
			params, err := mutationParams(current, row.DocketRun.ID, m)
			if err != nil {
				return err
			}
			written, err := q.ApplyRunMutation(ctx, params)
			if err != nil {
				return mapRunWriteError("mutate run", err)
			}
			if row.DocketRun.ClaimToken != nil {
				// The holder's Worker ends its handler at once (at this commit).
				if err := q.NotifyClaimRevoked(ctx, dbgen.NotifyClaimRevokedParams{ClaimToken: row.DocketRun.ClaimToken.String(), Status: written.DocketRun.Status}); err != nil {
					return fmt.Errorf("docket: notify the claim's holder: %w", err)
				}
			}
			markerCleared = row.DocketRun.TenantAdmittedAt != nil
			c.announceIfDue(ctx, q, written.DocketRun)
			result = MutateResult{Run: runWithPhase(written.DocketRun, written.Phase), Changed: true}
			return nil
		})
		if err != nil {
			return MutateResult{}, err
		}
		c.telemetry.signalled(ctx, markerCleared)
		return result, nil
	})
}

// lockRun locks the run of scopeKey and runID for a lifecycle decision
// (LockRun), with its phase: ErrNotFound when there is none.
func lockRun(ctx context.Context, q *dbgen.Queries, scopeKey, runID string) (dbgen.LockRunRow, error) {
	row, err := q.LockRun(ctx, dbgen.LockRunParams{ScopeKey: scopeKey, RunID: runID})
	if errors.Is(err, pgx.ErrNoRows) {
		return dbgen.LockRunRow{}, runNotFound(runID)
	}
	if err != nil {
		return dbgen.LockRunRow{}, fmt.Errorf("docket: lock run: %w", err)
	}
	return row, nil
}

// mutationParams validates m against the current run and returns the write.
func mutationParams(current Run, id int64, m Mutation) (dbgen.ApplyRunMutationParams, error) {
	switch {
	case !m.Status.valid():
		return dbgen.ApplyRunMutationParams{}, invalidArgument("unknown run status %q", m.Status)
	case m.Status != StatusRunning && !m.WakeAt.IsZero():
		return dbgen.ApplyRunMutationParams{}, invalidArgument("a wake time needs status running, not %q", m.Status)
	case current.Status.Terminal():
		return dbgen.ApplyRunMutationParams{}, fmt.Errorf("%w: run %q is already %s; use RetryRun to run it again", ErrInvalidTransition, current.RunID, current.Status)
	case current.Poisoned() && !m.Status.Terminal():
		return dbgen.ApplyRunMutationParams{}, fmt.Errorf("%w: run %q is poisoned; use RetryPoisonedRun or finish it", ErrInvalidTransition, current.RunID)
	}
	params := dbgen.ApplyRunMutationParams{Status: string(m.Status), ID: id}
	if m.State != nil {
		if err := validateState(m.State); err != nil {
			return dbgen.ApplyRunMutationParams{}, err
		}
		state := string(m.State)
		params.State = &state
	}
	if !m.WakeAt.IsZero() {
		if err := requireStorableTime("mutation WakeAt", m.WakeAt); err != nil {
			return dbgen.ApplyRunMutationParams{}, err
		}
		params.WakeAt = &m.WakeAt
	}
	return params, nil
}

// Cancel cancels an unfinished run through MutateRun: status cancelled,
// finished_at set, any claim revoked and the admission marker cleared. A run
// that is already terminal is left as it is (Changed is false).
func (c *Client) Cancel(ctx context.Context, scope Scope, runID string) (MutateResult, error) {
	return c.mutateRun(ctx, opCancel, scope, runID, func(r Run) (Mutation, error) {
		if r.Status.Terminal() {
			return Mutation{}, nil
		}
		return Mutation{Status: StatusCancelled}, nil
	})
}

// RetryPoisonedRun revives a poisoned run: healthy running, due now, claim
// attempts and abandons reset. Poison already cleared its admission, so the
// run is queued and is promoted again under its tenant's cap. A run that is
// not poisoned returns a *TransitionError (ErrInvalidTransition) and changes
// nothing.
func (c *store) RetryPoisonedRun(ctx context.Context, scope Scope, runID string) (Run, error) {
	return timed(ctx, c.telemetry, opRetryPoisonedRun, func() (Run, error) {
		scopeKey, err := c.runKey(scope, runID)
		if err != nil {
			return Run{}, err
		}
		var revived Run
		err = c.inTx(ctx, func(q *dbgen.Queries) error {
			row, err := lockRun(ctx, q, scopeKey, runID)
			if err != nil {
				return err
			}
			if err := TransitionRetryPoisoned.Check(runWithPhase(row.DocketRun, row.Phase)); err != nil {
				return err
			}
			written, err := q.RetryPoisonedRun(ctx, dbgen.RetryPoisonedRunParams{ScopeKey: scopeKey, RunID: runID})
			if err != nil {
				return fmt.Errorf("docket: retry poisoned run: %w", err)
			}
			c.announceIfDue(ctx, q, written.DocketRun)
			revived = runWithPhase(written.DocketRun, written.Phase)
			return nil
		})
		if err != nil {
			return Run{}, err
		}
		return revived, nil
	})
}
