package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

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
