package docket

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/groupcommit"
)

// batchable reports whether the commit of p can join a set-based statement:
// a schedule that releases the claim, and a schedule, step and state that
// Commit would accept (a RetryAt time PostgreSQL cannot hold would fail the
// whole statement), and an attempt change and failure Commit would accept.
// Anything else goes through Commit alone, which reports it.
func (p commitPlan) batchable() bool {
	return p.releasesClaim() && p.schedule.validate() == nil && p.step >= 0 && p.step <= math.MaxInt32 &&
		(p.state == nil || validateState(p.state) == nil) && p.attempt.valid() &&
		(p.failure == nil || (p.attempt == AttemptCount && validFailureKind(p.failure.Kind)))
}

// commitBatch writes the commits of batch, which batchable admitted, in one
// CommitRuns statement and returns each outcome as Commit would report it,
// or the statement's error when it failed as a whole. Each commit counts as
// one commit store call of the statement's duration, and its marker release
// as Commit counts it; a failed statement counts nothing, since each of its
// commits is retried alone.
func (c *Client) commitBatch(ctx context.Context, batch []batchCommit) ([]groupcommit.Result[batchCommitted], error) {
	callCtx, cancel := context.WithTimeout(ctx, workerCallTimeout)
	defer cancel()
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
	rows, err := c.queries.CommitRuns(callCtx, params)
	if err != nil {
		return nil, err
	}
	written := make(map[uuid.UUID]dbgen.CommitRunsRow, len(rows))
	for _, row := range rows {
		written[row.ClaimToken] = row
	}
	results := make([]groupcommit.Result[batchCommitted], n)
	for i, q := range batch {
		req, res := q.req, &results[i]
		if row, ok := written[req.Holder.Token]; ok {
			res.Value = batchCommitted{seq: row.CheckpointSeq, step: int(row.Step)}
			c.telemetry.committed(ctx, req.Disposition, row.MarkerCleared)
		} else {
			res.Err = explainFenceMiss(callCtx, c.queries, q.scopeKey, req.Holder.RunID,
				fmt.Errorf("%w: run %q at checkpoint %d", ErrStaleFence, req.Holder.RunID, req.ExpectedSeq))
		}
		c.telemetry.recordStore(ctx, opCommit, start, res.Err, false)
	}
	return results, nil
}
