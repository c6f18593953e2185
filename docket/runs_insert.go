package docket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// InsertRun inserts one running run in its own transaction; see InsertRunTx.
func (c *Client) InsertRun(ctx context.Context, run NewRun) (Run, error) {
	return c.insertRun(ctx, nil, run)
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

// insertRun inserts run on q, the caller's transaction, or nil for the
// client's own.
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
		if params.UniqueKey == nil {
			if q == nil {
				q = c.queries
			}
			row, err := q.InsertRun(ctx, params)
			if errors.Is(err, pgx.ErrNoRows) {
				return Run{}, fmt.Errorf("%w: run %s", ErrDuplicateRun, quoteID(params.RunID))
			}
			if err != nil {
				return Run{}, mapRunWriteError("insert run", err)
			}
			c.announceDue(ctx, q, run.WakeAt)
			return runWithPhase(row.DocketRun, row.Phase), nil
		}
		var inserted Run
		var holder *Run
		write := func(q *dbgen.Queries) error {
			var werr error
			inserted, holder, werr = insertUniqueRun(ctx, q, params)
			if werr == nil && holder == nil {
				c.announceDue(ctx, q, run.WakeAt)
			}
			return werr
		}
		// The holder is read after the insert at the insert's own clock, so
		// without the caller's transaction both run in one of the client's.
		if q == nil {
			err = c.inTx(ctx, write)
		} else {
			err = write(q)
		}
		if err != nil {
			return Run{}, err
		}
		if holder != nil {
			return *holder, fmt.Errorf("%w: run %s holds unique key %s", ErrUniqueRunExists, quoteID(holder.RunID), quoteID(*params.UniqueKey))
		}
		return inserted, nil
	})
}

// uniqueInsertAttempts bounds the inserts of one unique run or batch: each
// attempt after the first follows a holder that gave its key up between the
// insert and the read of the holder, which only a concurrent write can do.
const uniqueInsertAttempts = 8

// insertUniqueRun inserts the unique run of params on q, in a transaction,
// and returns it, or the run that holds its key.
func insertUniqueRun(ctx context.Context, q *dbgen.Queries, params dbgen.InsertRunParams) (Run, *Run, error) {
	for range uniqueInsertAttempts {
		row, err := q.InsertRun(ctx, params)
		if err == nil {
			return runWithPhase(row.DocketRun, row.Phase), nil, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Run{}, nil, mapRunWriteError("insert run", err)
		}
		holder, err := q.UniqueKeyHolder(ctx, dbgen.UniqueKeyHolderParams{
			ScopeKey:       deref(params.TenantID),
			UniqueKey:      *params.UniqueKey,
			WakeAt:         params.WakeAt,
			UniquePeriodUs: params.UniquePeriodUs,
		})
		if err == nil {
			run := runWithPhase(holder.DocketRun, holder.Phase)
			return Run{}, &run, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return Run{}, nil, fmt.Errorf("docket: reading the run that holds unique key %s: %w", quoteID(*params.UniqueKey), err)
		}
		taken, err := q.ExistingRunIDs(ctx, []string{params.RunID})
		if err != nil {
			return Run{}, nil, fmt.Errorf("docket: reading run id %s: %w", quoteID(params.RunID), err)
		}
		if len(taken) > 0 {
			return Run{}, nil, fmt.Errorf("%w: run %s", ErrDuplicateRun, quoteID(params.RunID))
		}
	}
	return Run{}, nil, fmt.Errorf("docket: insert run: the holder of unique key %s changed %d times during the insert", quoteID(*params.UniqueKey), uniqueInsertAttempts)
}

// InsertRuns inserts many running runs with one statement in its own
// transaction; see InsertRunsTx.
func (c *Client) InsertRuns(ctx context.Context, runs []NewRun) ([]string, error) {
	return c.insertRuns(ctx, nil, runs)
}

// InsertRunsTx inserts many running runs with one statement inside the
// caller's transaction and returns their run ids in input order (generated
// where empty). Runs of equal wake time keep their input order in their
// tenant's FIFO. The batch is all or nothing: any invalid run, or a run id
// repeated within the batch, fails it before the database is touched, the
// error naming the run's index in runs (counted from 0); a run id that
// already exists returns ErrDuplicateRun naming the run id and its index
// and, as a failed statement, aborts tx. A unique run (NewRun.Unique) whose
// key another run holds, an earlier run of the batch among them, is the one
// exception: it is skipped, its place in the returned ids holds the id of
// the run that holds the key, and a *UniqueRunsExistError (matching
// ErrUniqueRunExists) lists the skipped indexes while the rest of the batch
// is inserted and tx stays usable.
func (c *Client) InsertRunsTx(ctx context.Context, tx pgx.Tx, runs []NewRun) ([]string, error) {
	q, err := c.withTx(tx)
	if err != nil {
		return nil, err
	}
	return c.insertRuns(ctx, q, runs)
}

// insertRuns inserts runs on q, the caller's transaction, or nil for the
// client's own.
func (c *Client) insertRuns(ctx context.Context, q *dbgen.Queries, runs []NewRun) ([]string, error) {
	return timed(ctx, c.telemetry, opInsertRuns, func() (_ []string, err error) {
		ctx, sp := c.startSpan(ctx, spanInsert, trace.SpanKindProducer, trace.WithAttributes(spanAttrRunsCount.Int(len(runs))))
		defer func() { sp.end(err) }()
		if len(runs) == 0 {
			return nil, nil
		}
		batch := dbgen.InsertRunsParams{
			TraceContext:    injectTraceContext(ctx),
			RunIds:          make([]string, len(runs)),
			ScopeKeys:       make([]string, len(runs)),
			GraphIds:        make([]string, len(runs)),
			GraphHashes:     make([]string, len(runs)),
			States:          make([]string, len(runs)),
			WakeAts:         make([]time.Time, len(runs)),
			UniqueKeys:      make([]string, len(runs)),
			UniquePeriodsUs: make([]int64, len(runs)),
			UniqueStatuses:  make([]string, len(runs)),
			MaxAttempts:     make([]int32, len(runs)),
		}
		first := make(map[string]int, len(runs))
		var unique []int
		for i, run := range runs {
			p, err := c.newRunParams(run)
			if err != nil {
				return nil, fmt.Errorf("run at index %d of the batch: %w", i, err)
			}
			if j, seen := first[p.RunID]; seen {
				return nil, fmt.Errorf("%w: run %s at index %d repeats index %d of the batch", ErrDuplicateRun, quoteID(p.RunID), i, j)
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
			batch.MaxAttempts[i] = derefInt32(p.MaxAttempts)
			if p.UniqueKey != nil {
				unique = append(unique, i)
				batch.UniqueKeys[i] = *p.UniqueKey
				if p.UniquePeriodUs != nil {
					batch.UniquePeriodsUs[i] = *p.UniquePeriodUs
				}
				batch.UniqueStatuses[i] = strings.Join(p.UniqueStatuses, ",")
			}
		}
		if len(runs) == 1 {
			sp.set(runAttrs(batch.RunIds[0], runs[0].Scope, batch.GraphIds[0])...)
		}
		ids := slices.Clone(batch.RunIds)
		var skipped []int
		write := func(q *dbgen.Queries) error {
			var err error
			if len(unique) > 0 {
				_, err = q.InsertUniqueRuns(ctx, dbgen.InsertUniqueRunsParams(batch))
			} else {
				_, err = q.InsertRuns(ctx, batch)
			}
			if err != nil {
				return batchWriteError(err, batch.RunIds)
			}
			var werr error
			skipped, werr = settleUniqueBatch(ctx, q, batch, unique, ids)
			if werr == nil && len(skipped) < len(runs) {
				c.announceDue(ctx, q, batch.WakeAts...)
			}
			return werr
		}
		switch {
		case q != nil:
			err = write(q)
		case len(unique) > 0:
			// The holders are read after the insert at the insert's own
			// clock, so without the caller's transaction both run in one of
			// the client's.
			err = c.inTx(ctx, write)
		default:
			err = write(c.queries)
		}
		if err != nil {
			return nil, err
		}
		if len(skipped) > 0 {
			return ids, &UniqueRunsExistError{Indexes: skipped}
		}
		return ids, nil
	})
}

// settleUniqueBatch reads, after batch was inserted on q, which of its
// unique runs (the indexes in unique) went in; for each one that did not, it
// writes the id of the run holding its key into ids and returns its index,
// in ascending order. A run whose key nobody holds any more (the holder gave
// it up since the insert) is inserted again.
func settleUniqueBatch(ctx context.Context, q *dbgen.Queries, batch dbgen.InsertRunsParams, unique []int, ids []string) ([]int, error) {
	var skipped []int
	pending := unique
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt == uniqueInsertAttempts {
			return nil, fmt.Errorf("docket: insert runs: the holders of unique keys changed %d times during the insert", uniqueInsertAttempts)
		}
		if attempt > 0 {
			if _, err := q.InsertUniqueRuns(ctx, dbgen.InsertUniqueRunsParams(subBatch(batch, pending))); err != nil {
				return nil, batchWriteError(err, batch.RunIds)
			}
		}
		sub := subBatch(batch, pending)
		rows, err := q.UniqueBatchHolders(ctx, dbgen.UniqueBatchHoldersParams{
			RunIds:          sub.RunIds,
			ScopeKeys:       sub.ScopeKeys,
			UniqueKeys:      sub.UniqueKeys,
			WakeAts:         sub.WakeAts,
			UniquePeriodsUs: sub.UniquePeriodsUs,
		})
		if err != nil {
			return nil, fmt.Errorf("docket: reading the runs that hold the batch's unique keys: %w", err)
		}
		var orphaned []int
		for _, row := range rows {
			i := pending[row.Ord-1]
			switch {
			case row.Inserted:
			case row.HolderRunID != "":
				ids[i] = row.HolderRunID
				skipped = append(skipped, i)
			default:
				orphaned = append(orphaned, i)
			}
		}
		pending = orphaned
	}
	slices.Sort(skipped)
	return skipped, nil
}

// subBatch is the part of batch at indexes, in their order.
func subBatch(batch dbgen.InsertRunsParams, indexes []int) dbgen.InsertRunsParams {
	sub := dbgen.InsertRunsParams{TraceContext: batch.TraceContext}
	for _, i := range indexes {
		sub.RunIds = append(sub.RunIds, batch.RunIds[i])
		sub.ScopeKeys = append(sub.ScopeKeys, batch.ScopeKeys[i])
		sub.GraphIds = append(sub.GraphIds, batch.GraphIds[i])
		sub.GraphHashes = append(sub.GraphHashes, batch.GraphHashes[i])
		sub.States = append(sub.States, batch.States[i])
		sub.WakeAts = append(sub.WakeAts, batch.WakeAts[i])
		sub.UniqueKeys = append(sub.UniqueKeys, batch.UniqueKeys[i])
		sub.UniquePeriodsUs = append(sub.UniquePeriodsUs, batch.UniquePeriodsUs[i])
		sub.UniqueStatuses = append(sub.UniqueStatuses, batch.UniqueStatuses[i])
	}
	return sub
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
	if run.MaxAttempts != 0 {
		if run.MaxAttempts < 0 || run.MaxAttempts > math.MaxInt32 {
			return dbgen.InsertRunParams{}, invalidArgument("max attempts %d is outside 1..%d", run.MaxAttempts, math.MaxInt32)
		}
		maxAttempts := int32(run.MaxAttempts)
		params.MaxAttempts = &maxAttempts
	}
	if run.Unique != nil {
		if err := setUniqueness(&params, *run.Unique, run.State); err != nil {
			return dbgen.InsertRunParams{}, err
		}
	}
	return params, nil
}

// setUniqueness validates u and writes it into params: the key (derived
// from the graph id and state when empty), the period in microseconds and
// the covered statuses (nil for the schema's default).
func setUniqueness(params *dbgen.InsertRunParams, u Uniqueness, state json.RawMessage) error {
	key := u.Key
	if key == "" {
		derived, err := derivedUniqueKey(params.GraphID, state)
		if err != nil {
			return err
		}
		key = derived
	}
	if err := validateIdentifier("unique key", key); err != nil {
		return err
	}
	params.UniqueKey = &key
	switch {
	case u.Period < 0:
		return invalidArgument("unique period %s is negative", u.Period)
	case u.Period%time.Microsecond != 0:
		return invalidArgument("unique period %s is not a whole number of microseconds", u.Period)
	case u.Period > 0:
		us := u.Period.Microseconds()
		params.UniquePeriodUs = &us
	}
	if len(u.Statuses) == 0 {
		return nil
	}
	for _, st := range u.Statuses {
		if !st.valid() {
			return invalidArgument("unique status %q is not a run status", st)
		}
		params.UniqueStatuses = append(params.UniqueStatuses, string(st))
	}
	if !slices.Contains(u.Statuses, StatusRunning) {
		return invalidArgument("unique statuses %v leave out running, the status every run is inserted with", u.Statuses)
	}
	return nil
}

// derivedUniqueKey is the unique key of a run without an explicit one: the
// hex SHA-256 of its graph id, a zero byte and its state as canonical JSON
// (object keys sorted, no insignificant space, numbers as written).
func derivedUniqueKey(graphID string, state json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(state))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return "", invalidArgument("state is not valid JSON: %v", err)
	}
	canonical, err := json.Marshal(doc)
	if err != nil {
		return "", invalidArgument("state cannot be encoded again: %v", err)
	}
	sum := sha256.New()
	sum.Write([]byte(graphID))
	sum.Write([]byte{0})
	sum.Write(canonical)
	return hex.EncodeToString(sum.Sum(nil)), nil
}
