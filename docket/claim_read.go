package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
)

// claimDueRead is ClaimDue for the Worker, which needs the state of every
// run it leases: the claim statement and the read of its leased runs go to
// the server as one batch, which PostgreSQL runs as one implicit transaction.
// The read costs no round trip of its own and sees exactly the leased rows,
// which the claim keeps locked until that transaction commits. It returns
// the leased runs by run id; every lease counts as one fetch_run store call
// of the batch's duration.
func (c *Client) claimDueRead(ctx context.Context, req ClaimRequest) (ClaimResult, map[string]gen.LeasedRunsRow, error) {
	start := time.Now()
	var leased []gen.LeasedRunsRow
	out, err := c.claimWith(ctx, req, c.config.AsyncClaimCommit, func(p policy.Plan) ([]policy.Row, error) {
		rows, read, err := c.execClaimRead(ctx, p)
		leased = read
		return rows, err
	})
	if err != nil {
		return ClaimResult{}, nil, err
	}
	runs := make(map[string]gen.LeasedRunsRow, len(leased))
	for _, row := range leased {
		runs[row.RunID] = row
	}
	for _, l := range out.Leases {
		var readErr error
		if _, found := runs[l.RunID]; !found {
			readErr = runNotFound(l.RunID)
		}
		(&storeCall{t: c.telemetry, op: opFetchRun, start: start}).end(ctx, &readErr)
	}
	return out, runs, nil
}

// execClaimRead sends a production plan's claim statement, which notes the
// runs it leases, and LeasedRuns in one batch; with AsyncCommit the batch
// starts by turning synchronous_commit off for its own transaction.
func (c *Client) execClaimRead(ctx context.Context, p policy.Plan) ([]policy.Row, []gen.LeasedRunsRow, error) {
	if p.Trace {
		return nil, nil, fmt.Errorf("docket: a traced %s plan on the worker's claim path", p.Function)
	}
	batch := &pgx.Batch{}
	// Settings first, each in force for the batch's one transaction.
	settings := 0
	if c.config.Schema != "" {
		batch.Queue(scopeSearchPath, c.names.searchPath)
		settings++
	}
	if p.AsyncCommit {
		batch.Queue(gen.CommitClaimAsynchronously)
		settings++
	}
	a := p.Args
	batch.Queue(c.qualified(c.engine.statements.noted), a.Now, a.Cutoff, a.Demand, a.MaxAttempts, a.Preference)
	batch.Queue(c.qualified(gen.LeasedRuns))
	results := c.pool.SendBatch(ctx, batch)
	rows, leased, err := readClaimBatch(results, settings, c.engine.statements.collectNoted)
	// Close reports a failed commit of the batch's implicit transaction.
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		return nil, nil, err
	}
	return rows, leased, nil
}

// readClaimBatch reads the results of execClaimRead's batch in order,
// after its leading settings statements.
func readClaimBatch(results pgx.BatchResults, settings int, collect func(pgx.Rows) ([]policy.Row, error)) ([]policy.Row, []gen.LeasedRunsRow, error) {
	for range settings {
		if _, err := results.Exec(); err != nil {
			return nil, nil, err
		}
	}
	claimRows, err := results.Query()
	if err != nil {
		return nil, nil, err
	}
	rows, err := collect(claimRows)
	if err != nil {
		return nil, nil, err
	}
	leasedRows, err := results.Query()
	if err != nil {
		return nil, nil, err
	}
	leased, err := pgx.CollectRows(leasedRows, pgx.RowToStructByPos[gen.LeasedRunsRow])
	if err != nil {
		return nil, nil, err
	}
	return rows, leased, nil
}
