package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Retention batch sizes of DeleteFinishedRuns.
const (
	// DefaultRetentionBatch is the batch size used when none is given.
	DefaultRetentionBatch = 1000
	// MaxRetentionBatch is the largest batch size DeleteFinishedRuns accepts.
	MaxRetentionBatch = 10000
)

// DeleteFinishedRunsOptions select the runs DeleteFinishedRuns removes.
type DeleteFinishedRunsOptions struct {
	// Status limits the deletion to runs that finished in one status (done,
	// failed or cancelled); "" means all three.
	Status RunStatus
	// FinishedBefore is the cutoff: runs finished strictly before it are
	// deleted. It is required and must be a time PostgreSQL's timestamptz
	// can hold.
	FinishedBefore time.Time
	// BatchSize is how many runs one batch deletes, in
	// 1..MaxRetentionBatch; zero means DefaultRetentionBatch.
	BatchSize int
	// Scope limits the deletion to one owner; nil means every scope.
	Scope *Scope
	// OnBatch, when set, is called after each committed batch with the runs
	// that batch deleted and the running total. It runs on the caller's
	// goroutine between batches and must return quickly.
	OnBatch func(deleted, total int64)
}

// DeleteFinishedRuns deletes done, failed and cancelled runs (or those of
// opts.Status) that finished before opts.FinishedBefore, oldest first, in
// batches of opts.BatchSize. Each
// batch is one short statement in its own transaction that skips rows another
// transaction has locked, so retention never waits on a lock and never delays
// a claim; a skipped run is left for a later call. Unfinished runs are never
// deleted, and partitions and their ring positions stay, even for a scope
// whose runs are all gone. It stops after a batch smaller than the batch size
// and returns the number of runs deleted.
//
// ctx is checked before every batch: when it ends, the runs of the batches
// already committed stay deleted and their count is returned with ctx's
// error. Invalid options return ErrInvalidArgument (or ErrTenantRequired for
// a tenantless scope under required tenancy) and delete nothing.
//
// The application role of docs/grants.sql cannot delete runs: run retention
// as a role that also holds DELETE on docket_runs.
func (c *store) DeleteFinishedRuns(ctx context.Context, opts DeleteFinishedRunsOptions) (int64, error) {
	return timed(ctx, c.telemetry, opDeleteFinishedRuns, func() (int64, error) {
		params, err := c.retentionParams(opts)
		if err != nil {
			return 0, err
		}
		var total int64
		for {
			if err := ctx.Err(); err != nil {
				return total, fmt.Errorf("docket: delete finished runs: %w", err)
			}
			deleted, err := c.queries.DeleteFinishedRuns(ctx, params)
			if err != nil {
				return total, fmt.Errorf("docket: delete finished runs: %w", err)
			}
			total += deleted
			if opts.OnBatch != nil {
				opts.OnBatch(deleted, total)
			}
			if deleted < int64(params.BatchSize) {
				return total, nil
			}
		}
	})
}

// finishedStatuses are the statuses retention deletes, in the order a
// Worker's pass takes them.
var finishedStatuses = []RunStatus{StatusDone, StatusCancelled, StatusFailed}

// retentionParams validates opts and returns one batch's statement arguments.
func (c *store) retentionParams(opts DeleteFinishedRunsOptions) (dbgen.DeleteFinishedRunsParams, error) {
	if opts.Status != "" && !opts.Status.Terminal() {
		return dbgen.DeleteFinishedRunsParams{}, invalidArgument("retention status %q is not a finished status (done, failed or cancelled)", opts.Status)
	}
	if opts.FinishedBefore.IsZero() {
		return dbgen.DeleteFinishedRunsParams{}, invalidArgument("a FinishedBefore cutoff is required")
	}
	if err := requireStorableTime("retention FinishedBefore", opts.FinishedBefore); err != nil {
		return dbgen.DeleteFinishedRunsParams{}, err
	}
	batch := opts.BatchSize
	switch {
	case batch == 0:
		batch = DefaultRetentionBatch
	case batch < 1 || batch > MaxRetentionBatch:
		return dbgen.DeleteFinishedRunsParams{}, invalidArgument("retention batch size %d is outside 1..%d", batch, MaxRetentionBatch)
	}
	params := dbgen.DeleteFinishedRunsParams{FinishedBefore: opts.FinishedBefore, BatchSize: int32(batch)}
	for _, status := range finishedStatuses {
		if opts.Status == "" || opts.Status == status {
			params.Statuses = append(params.Statuses, string(status))
		}
	}
	if opts.Scope != nil {
		key, err := c.scopeKey(*opts.Scope)
		if err != nil {
			return dbgen.DeleteFinishedRunsParams{}, err
		}
		params.ScopeKey = &key
	}
	return params, nil
}
