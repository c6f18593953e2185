package docket

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
)

// claimDueRead is ClaimDue for the Worker, which needs the state of every
// run it leases: the claim statement and the read of its leased runs go to
// the server as one batch, which PostgreSQL runs as one implicit transaction.
// The read costs no round trip of its own and sees exactly the leased rows,
// which the claim keeps locked until that transaction commits. The read is
// a statement of its own because a join in the claim statement would read
// in a snapshot older than the leases (LeasedRuns in db/queries/worker.sql).
// It returns the leased runs by run id; every lease counts as one fetch_run
// store call of the batch's duration. Like every claim call of a Worker, it
// records a docket.claim span only when it leased or poisoned a run, or
// failed.
func (c *Client) claimDueRead(ctx context.Context, req ClaimRequest) (ClaimResult, map[string]dbgen.LeasedRunsRow, error) {
	start := time.Now()
	var leased []dbgen.LeasedRunsRow
	out, err := c.claimWith(ctx, req, c.config.AsyncClaimCommit, spanOutcomeCalls, func(p claimpolicy.Plan) ([]claimpolicy.Row, error) {
		rows, read, err := c.execClaimRead(ctx, p)
		leased = read
		return rows, err
	})
	if err != nil {
		return ClaimResult{}, nil, err
	}
	runs := make(map[string]dbgen.LeasedRunsRow, len(leased))
	for _, row := range leased {
		runs[row.RunID] = row
	}
	for _, l := range out.Leases {
		var readErr error
		if _, found := runs[l.RunID]; !found {
			readErr = runNotFound(l.RunID)
		}
		c.telemetry.recordStore(ctx, opFetchRun, start, readErr, false)
	}
	return out, runs, nil
}

// execClaimRead sends a production plan's claim statement, which notes the
// runs it leases, and LeasedRuns as one claim batch.
func (c *Client) execClaimRead(ctx context.Context, p claimpolicy.Plan) ([]claimpolicy.Row, []dbgen.LeasedRunsRow, error) {
	var leased []dbgen.LeasedRunsRow
	rows, err := c.claimBatch(ctx, p, c.engine.statements.noted,
		func(b *pgx.Batch) { b.Queue(c.qualified(dbgen.LeasedRuns)) },
		func(results pgx.BatchResults) error {
			leasedRows, err := results.Query()
			if err != nil {
				return err
			}
			leased, err = pgx.CollectRows(leasedRows, pgx.RowToStructByPos[dbgen.LeasedRunsRow])
			return err
		})
	if err != nil {
		return nil, nil, err
	}
	return rows, leased, nil
}
