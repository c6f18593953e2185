package docket

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// Batch sizes of a take.
const (
	// DefaultScheduleBatch is the schedules one take locks when its limit
	// is zero, and the Worker's batch.
	DefaultScheduleBatch = 100
	// MaxScheduleBatch is the largest limit of a take.
	MaxScheduleBatch = 1000
)

// ScheduleTick is one tick a take handled.
type ScheduleTick struct {
	// Scope and Schedule name the schedule.
	Scope    Scope
	Schedule string
	// At is the tick's time.
	At time.Time
	// RunID is the tick's deterministic run id (ScheduleRunID).
	RunID string
	// Err is nil when the take inserted the tick's run. Otherwise nothing
	// was inserted for the tick: ErrDuplicateRun when a run with its id
	// existed already, the run's validation error when this client refuses
	// the run (a tenantless schedule under TenantRequired), or a
	// *ScheduleError for a stored cadence this binary cannot read (a row
	// written with plain SQL), whose schedule is then left as it is and
	// reported again by every take.
	Err error
}

// TakeDueTicksTx takes the ticks of up to limit schedules due at now (0
// means DefaultScheduleBatch, at most MaxScheduleBatch) inside tx: it locks
// the due, unpaused rows with "for update skip locked", inserts one run per
// tick the missed-tick policy selects through InsertRunsTx (so admission,
// caps, FIFO and the ring apply as for any run), and advances each
// schedule's next tick past now. Everything lands when tx commits; after a
// rollback the ticks are due again for the next taker. Rows another
// transaction holds are skipped: that transaction owns their ticks. The
// Worker calls it in a transaction of its own when WorkerConfig.Schedules is
// set; it is exported for applications that take ticks themselves.
func (c *Client) TakeDueTicksTx(ctx context.Context, tx pgx.Tx, now time.Time, limit int) ([]ScheduleTick, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return nil, err
	}
	switch {
	case limit == 0:
		limit = DefaultScheduleBatch
	case limit < 0 || limit > MaxScheduleBatch:
		return nil, invalidArgument("schedule batch %d is outside 1..%d", limit, MaxScheduleBatch)
	}
	if err := requireStorableTime("now", now); err != nil {
		return nil, err
	}
	ticks, _, err := c.takeDueTicks(ctx, q, now, limit)
	return ticks, err
}

// tickBatch is one takeDueTicks result, carried through timed.
type tickBatch struct {
	ticks []ScheduleTick
	full  bool
}

// takeDueTicks is TakeDueTicksTx on q; full reports a batch that advanced
// limit schedules, so more may be due. Rows it cannot read are not
// advanced and do not count, so a caller that repeats full batches never
// spins on them.
func (c *Client) takeDueTicks(ctx context.Context, q *dbgen.Queries, now time.Time, limit int) ([]ScheduleTick, bool, error) {
	batch, err := timed(ctx, c.telemetry, opTakeScheduleTicks, func() (tickBatch, error) {
		rows, err := q.LockDueSchedules(ctx, dbgen.LockDueSchedulesParams{Now: now, BatchLimit: int32(limit)})
		if err != nil {
			return tickBatch{}, fmt.Errorf("docket: locking due schedules: %w", err)
		}
		var (
			ticks   []ScheduleTick
			runs    []NewRun
			advance dbgen.AdvanceSchedulesParams
		)
		for _, row := range rows {
			scope := scopeOf(row.TenantID)
			cad, err := cadenceOfRow(row)
			if err != nil {
				ticks = append(ticks, ScheduleTick{Scope: scope, Schedule: row.Name, At: row.NextTickAt, Err: err})
				continue
			}
			due, following := cad.dueTicks(row.NextTickAt, now, MissedTicks(row.MissedTicks))
			for _, at := range due {
				run := NewRun{
					RunID: ScheduleRunID(scope, row.Name, at), Scope: scope,
					GraphID: row.GraphID, GraphHash: row.GraphHash, State: row.State,
				}
				tick := ScheduleTick{Scope: scope, Schedule: row.Name, At: at, RunID: run.RunID}
				if _, tick.Err = c.newRunParams(run); tick.Err == nil {
					runs = append(runs, run)
				}
				ticks = append(ticks, tick)
			}
			advance.Ids = append(advance.Ids, row.ID)
			advance.NextTickAts = append(advance.NextTickAts, following)
			advance.LastTickAts = append(advance.LastTickAts, due[len(due)-1])
		}
		runs, err = c.dropExistingRuns(ctx, q, runs, ticks)
		if err != nil {
			return tickBatch{}, err
		}
		if _, err := c.insertRuns(ctx, q, runs); err != nil {
			return tickBatch{}, fmt.Errorf("docket: inserting tick runs: %w", err)
		}
		if len(advance.Ids) > 0 {
			if err := q.AdvanceSchedules(ctx, advance); err != nil {
				return tickBatch{}, fmt.Errorf("docket: advancing schedules: %w", err)
			}
		}
		return tickBatch{ticks, len(advance.Ids) == limit}, nil
	})
	return batch.ticks, batch.full, err
}

// dropExistingRuns removes the runs whose id exists already and marks their
// ticks ErrDuplicateRun. The schedule rows are locked, so no other taker
// inserts these ids meanwhile; a run inserted by other means between this
// read and the insert fails the take, and the next take drops it here.
func (c *Client) dropExistingRuns(ctx context.Context, q *dbgen.Queries, runs []NewRun, ticks []ScheduleTick) ([]NewRun, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.RunID
	}
	existing, err := q.ExistingRunIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("docket: reading existing tick runs: %w", err)
	}
	if len(existing) == 0 {
		return runs, nil
	}
	for i := range ticks {
		if slices.Contains(existing, ticks[i].RunID) {
			ticks[i].Err = fmt.Errorf("%w: run %q", ErrDuplicateRun, ticks[i].RunID)
		}
	}
	return slices.DeleteFunc(runs, func(r NewRun) bool { return slices.Contains(existing, r.RunID) }), nil
}
