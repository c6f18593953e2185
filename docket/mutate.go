package docket

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
		return dbgen.ApplyRunMutationParams{}, fmt.Errorf("%w: run %s is already %s; use RetryRun to run it again", ErrInvalidTransition, quoteID(current.RunID), current.Status)
	case current.Poisoned() && !m.Status.Terminal():
		return dbgen.ApplyRunMutationParams{}, fmt.Errorf("%w: run %s is poisoned; use RetryPoisonedRun or finish it", ErrInvalidTransition, quoteID(current.RunID))
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

// RetryRunOptions tune a RetryRun.
type RetryRunOptions struct {
	// Force allows retrying a done run; without it a done run is refused
	// with ErrInvalidTransition, since redoing finished work is rarely meant.
	Force bool
	// WakeAt is when the retried run is due; zero means now. It must be a
	// time PostgreSQL's timestamptz can hold.
	WakeAt time.Time
}

// RetryRun sends a failed or cancelled run (a done one only with Force) back
// to work: status running, queued in its tenant's FIFO with no claim and no
// admission marker, due at WakeAt or now, claim attempts and abandons reset,
// the handler-attempt counter (Run.Attempt) reset to 0 so a Worker's
// RetryPolicy gives it all its attempts again, finished_at cleared. Its error
// history is kept, so the reasons of the earlier failure stay readable (the
// new attempts' entries number from 1 again; their At tells them apart). Its state, step, checkpoint_seq and latest checkpoint
// type are kept: a retry is not a checkpoint, and no holder can write with an
// old claim, since every holder write is fenced on a claim token the retry
// never issues. The run counts as unfinished again, its partition keeps its
// ring position, a parked partition wakes, and listening Workers are woken
// when the run is due now.
//
// A run that is not terminal, or a done run without Force, returns a
// *TransitionError (ErrInvalidTransition); another scope's run returns
// ErrNotFound; an invalid scope, run id or WakeAt returns ErrInvalidArgument
// (or ErrTenantRequired). Nothing changes in any of these cases.
func (c *store) RetryRun(ctx context.Context, scope Scope, runID string, opts RetryRunOptions) (Run, error) {
	return timed(ctx, c.telemetry, opRetryRun, func() (Run, error) {
		scopeKey, err := c.runKey(scope, runID)
		if err != nil {
			return Run{}, err
		}
		params := dbgen.RetryFinishedRunParams{}
		if !opts.WakeAt.IsZero() {
			if err := requireStorableTime("retry WakeAt", opts.WakeAt); err != nil {
				return Run{}, err
			}
			params.WakeAt = &opts.WakeAt
		}
		var retried Run
		err = c.inTx(ctx, func(q *dbgen.Queries) error {
			row, err := lockRun(ctx, q, scopeKey, runID)
			if err != nil {
				return err
			}
			if err := TransitionRetry.check(runWithPhase(row.DocketRun, row.Phase), opts.Force); err != nil {
				return err
			}
			params.ID = row.DocketRun.ID
			written, err := q.RetryFinishedRun(ctx, params)
			if err != nil {
				return fmt.Errorf("docket: retry run: %w", err)
			}
			c.announceIfDue(ctx, q, written.DocketRun)
			retried = runWithPhase(written.DocketRun, written.Phase)
			return nil
		})
		if err != nil {
			return Run{}, err
		}
		return retried, nil
	})
}

// Transition names an operator transition of one run. Its value is also the
// name of the "docket runs" action and of the console's run action that
// apply it.
type Transition string

// The operator transitions.
const (
	// TransitionCancel finishes an unfinished run as cancelled: a MutateRun
	// to StatusCancelled.
	TransitionCancel Transition = "cancel"
	// TransitionResume sends a waiting run back to work: a MutateRun to
	// StatusRunning.
	TransitionResume Transition = "resume"
	// TransitionRetry sends a failed or cancelled run, or a done one with
	// Force, back to work: RetryRun.
	TransitionRetry Transition = "retry"
	// TransitionRetryPoisoned revives a poisoned run: RetryPoisonedRun.
	TransitionRetryPoisoned Transition = "retry-poisoned"
)

// phasePoisoned is the phase of a poisoned run, whose status is running.
const phasePoisoned = "poisoned"

// phaseOf is the state of r the transitions read: "poisoned" for a
// poisoned run, else its status.
func phaseOf(r Run) string {
	if r.Poisoned() {
		return phasePoisoned
	}
	return string(r.Status)
}

// transitionRule is one transition's rule.
type transitionRule struct {
	// phases are the phases it applies to; forced those it applies to only
	// with RetryRunOptions.Force.
	phases, forced []string
	// purpose says what it does to a run, for a refusal that names it
	// instead; "" when no refusal names it.
	purpose string
	// goCall is the Go call that applies it, as Error names it.
	goCall string
}

// transitionRules are the rules of the operator transitions: RetryRun,
// RetryPoisonedRun, the CLI and the console check them, and the refusals
// are phrased from them.
var transitionRules = map[Transition]transitionRule{
	TransitionCancel: {phases: []string{string(StatusRunning), string(StatusWaiting), phasePoisoned},
		goCall: "MutateRun with StatusCancelled"},
	TransitionResume: {phases: []string{string(StatusWaiting)},
		purpose: "to send it back to work", goCall: "MutateRun with StatusRunning"},
	TransitionRetry: {phases: []string{string(StatusFailed), string(StatusCancelled)}, forced: []string{string(StatusDone)},
		purpose: "to run it again", goCall: "RetryRun"},
	TransitionRetryPoisoned: {phases: []string{phasePoisoned},
		purpose: "to revive it", goCall: "RetryPoisonedRun"},
}

// remedyOrder is the order in which a refusal looks for the transition that
// applies instead.
var remedyOrder = []Transition{TransitionRetryPoisoned, TransitionRetry, TransitionResume}

// Allows reports whether t applies to r (a retry of a done run needs Force,
// which Allows does not assume).
func (t Transition) Allows(r Run) bool {
	return t.check(r, false) == nil
}

// Check returns nil when t applies to r, else a *TransitionError that says
// why not.
func (t Transition) Check(r Run) error {
	return t.check(r, false)
}

// check is Check, with Force for a retry.
func (t Transition) check(r Run, force bool) error {
	rule, ok := transitionRules[t]
	if !ok {
		return invalidArgument("unknown run transition %q", t)
	}
	phase := phaseOf(r)
	if slices.Contains(rule.phases, phase) || force && slices.Contains(rule.forced, phase) {
		return nil
	}
	return &TransitionError{RunID: r.RunID, Transition: t, Phase: phase}
}

// TransitionError reports an operator transition that the run's state does
// not allow; nothing was changed. It matches ErrInvalidTransition.
type TransitionError struct {
	// RunID is the run's id.
	RunID string
	// Transition is the refused transition.
	Transition Transition
	// Phase is the run's state: its status, or "poisoned".
	Phase string
}

// Error phrases the refusal with the Go calls that apply the transitions.
func (e *TransitionError) Error() string {
	return ErrInvalidTransition.Error() + ": " + e.Explain(func(t Transition, force bool) string {
		if force {
			return transitionRules[t].goCall + " with Force"
		}
		return transitionRules[t].goCall
	})
}

// Is reports ErrInvalidTransition.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// Explain phrases the refusal for a caller with names of its own: what
// state the run is in, which states the transition applies to, and the
// transition that applies to the run instead, if any, as name(t, force)
// calls it (force: with RetryRunOptions.Force); a name of "" leaves that
// part out.
func (e *TransitionError) Explain(name func(t Transition, force bool) string) string {
	text := fmt.Sprintf("run %s is %s; %s applies only to a run that is %s",
		quoteID(e.RunID), e.Phase, e.Transition, orList(transitionRules[e.Transition].phases))
	if t, force, ok := e.remedy(); ok {
		if call := name(t, force); call != "" {
			text += fmt.Sprintf("; use %s %s", call, transitionRules[t].purpose)
		}
	}
	return text
}

// remedy returns the transition that applies to the run instead: another
// transition that applies to its phase, or the same one with Force.
func (e *TransitionError) remedy() (Transition, bool, bool) {
	for _, t := range remedyOrder {
		rule := transitionRules[t]
		switch {
		case t != e.Transition && slices.Contains(rule.phases, e.Phase):
			return t, false, true
		case slices.Contains(rule.forced, e.Phase):
			return t, true, true
		}
	}
	return "", false, false
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
