package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// InsertRun inserts one running run in its own transaction; see InsertRunTx.
func (c *Client) InsertRun(ctx context.Context, run NewRun) (Run, error) {
	return c.insertRun(ctx, c.queries, run)
}

// InsertRunTx inserts one running run inside the caller's transaction, so an
// application enqueues atomically with its own writes. The run's owner
// partition and ring position are created by the same statement: if tx rolls
// back, neither the run nor a new partition remains.
//
// Invalid input returns an error wrapping ErrInvalidArgument (or
// ErrTenantRequired for a tenantless run under required tenancy) and writes
// nothing. A run id that already exists, in any scope since run ids are
// global, returns ErrDuplicateRun, writes nothing and leaves tx usable. The
// run is due at WakeAt, or now when WakeAt is zero.
func (c *Client) InsertRunTx(ctx context.Context, tx pgx.Tx, run NewRun) (Run, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return Run{}, err
	}
	return c.insertRun(ctx, q, run)
}

func (c *Client) insertRun(ctx context.Context, q *dbgen.Queries, run NewRun) (Run, error) {
	return timed(ctx, c.telemetry, opInsertRun, func() (_ Run, err error) {
		ctx, sp := c.startSpan(ctx, spanInsert, trace.SpanKindProducer, trace.WithAttributes(spanAttrRunsCount.Int(1)))
		defer func() { sp.end(err) }()
		params, err := c.newRunParams(run)
		if err != nil {
			return Run{}, err
		}
		sp.set(runAttrs(params.RunID, run.Scope, params.GraphID)...)
		params.TraceContext = injectTraceContext(ctx)
		row, err := q.InsertRun(ctx, params)
		if errors.Is(err, pgx.ErrNoRows) {
			return Run{}, fmt.Errorf("%w: run %q", ErrDuplicateRun, params.RunID)
		}
		if err != nil {
			return Run{}, mapRunWriteError("insert run", err)
		}
		c.announceDue(ctx, q, run.WakeAt)
		return runWithPhase(row.DocketRun, row.Phase), nil
	})
}

// InsertRuns inserts many running runs with one statement in its own
// transaction; see InsertRunsTx.
func (c *Client) InsertRuns(ctx context.Context, runs []NewRun) ([]string, error) {
	return c.insertRuns(ctx, c.queries, runs)
}

// InsertRunsTx inserts many running runs with one statement inside the
// caller's transaction and returns their run ids in input order (generated
// where empty). Runs of equal wake time keep their input order in their
// tenant's FIFO. The batch is all or nothing: any invalid run, or a run id
// repeated within the batch, fails it before the database is touched, the
// error naming the run's index in runs (counted from 0); a run id that
// already exists returns ErrDuplicateRun naming the run id and its index
// and, as a failed statement, aborts tx.
func (c *Client) InsertRunsTx(ctx context.Context, tx pgx.Tx, runs []NewRun) ([]string, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return nil, err
	}
	return c.insertRuns(ctx, q, runs)
}

func (c *Client) insertRuns(ctx context.Context, q *dbgen.Queries, runs []NewRun) ([]string, error) {
	return timed(ctx, c.telemetry, opInsertRuns, func() (_ []string, err error) {
		ctx, sp := c.startSpan(ctx, spanInsert, trace.SpanKindProducer, trace.WithAttributes(spanAttrRunsCount.Int(len(runs))))
		defer func() { sp.end(err) }()
		if len(runs) == 0 {
			return nil, nil
		}
		batch := dbgen.InsertRunsParams{
			TraceContext: injectTraceContext(ctx),
			RunIds:       make([]string, len(runs)),
			ScopeKeys:    make([]string, len(runs)),
			GraphIds:     make([]string, len(runs)),
			GraphHashes:  make([]string, len(runs)),
			States:       make([]string, len(runs)),
			WakeAts:      make([]time.Time, len(runs)),
		}
		first := make(map[string]int, len(runs))
		for i, run := range runs {
			p, err := c.newRunParams(run)
			if err != nil {
				return nil, fmt.Errorf("run at index %d of the batch: %w", i, err)
			}
			if j, seen := first[p.RunID]; seen {
				return nil, fmt.Errorf("%w: run %q at index %d repeats index %d of the batch", ErrDuplicateRun, p.RunID, i, j)
			}
			first[p.RunID] = i
			batch.RunIds[i] = p.RunID
			batch.ScopeKeys[i] = deref(p.TenantID)
			batch.GraphIds[i] = p.GraphID
			batch.GraphHashes[i] = p.GraphHash
			batch.States[i] = string(p.State)
			if p.WakeAt != nil {
				batch.WakeAts[i] = *p.WakeAt
			}
		}
		if len(runs) == 1 {
			sp.set(runAttrs(batch.RunIds[0], runs[0].Scope, batch.GraphIds[0])...)
		}
		if _, err := q.InsertRuns(ctx, batch); err != nil {
			return nil, batchWriteError(err, batch.RunIds)
		}
		c.announceDue(ctx, q, batch.WakeAts...)
		return batch.RunIds, nil
	})
}

// newRunParams validates run under the client's tenant mode and returns the
// insert parameters, with a generated run id when none was given.
func (c *Client) newRunParams(run NewRun) (dbgen.InsertRunParams, error) {
	if _, err := c.scopeKey(run.Scope); err != nil {
		return dbgen.InsertRunParams{}, err
	}
	runID := run.RunID
	if runID == "" {
		runID = uuid.NewString()
	}
	if err := validateIdentifier("run id", runID); err != nil {
		return dbgen.InsertRunParams{}, err
	}
	if err := validateIdentifier("graph id", run.GraphID); err != nil {
		return dbgen.InsertRunParams{}, err
	}
	if err := validateIdentifier("graph hash", run.GraphHash); err != nil {
		return dbgen.InsertRunParams{}, err
	}
	if err := validateState(run.State); err != nil {
		return dbgen.InsertRunParams{}, err
	}
	params := dbgen.InsertRunParams{
		RunID:     runID,
		GraphID:   run.GraphID,
		GraphHash: run.GraphHash,
		State:     string(run.State),
		TenantID:  run.Scope.tenantColumn(),
	}
	if !run.WakeAt.IsZero() {
		if err := requireStorableTime("WakeAt", run.WakeAt); err != nil {
			return dbgen.InsertRunParams{}, err
		}
		wake := run.WakeAt
		params.WakeAt = &wake
	}
	return params, nil
}
