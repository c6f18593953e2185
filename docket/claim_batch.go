package docket

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/claimpolicy"
	"github.com/docketrun/docket-go/internal/dbgen"
)

// claimBatch sends claimSQL, a production claim statement, with plan p's
// arguments as one batch: one round trip, which PostgreSQL runs as one
// implicit transaction. The settings that must hold for that transaction
// come first: the schema scope when Config.Schema is set and, for an
// AsyncCommit plan, synchronous_commit off, which is then in force at the
// transaction's commit. More statements may follow the claim: more queues
// them and readMore reads their results. It serves only calls that commit
// on their own, never a caller's transaction.
func (c *Client) claimBatch(ctx context.Context, p claimpolicy.Plan, claimSQL string,
	more func(*pgx.Batch), readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	if p.Trace {
		return nil, fmt.Errorf("docket: a traced %s plan on a claim batch", p.Function)
	}
	batch := &pgx.Batch{}
	settings := 0
	if c.names != nil {
		batch.Queue(scopeSearchPath, c.names.searchPath)
		settings++
	}
	if p.AsyncCommit {
		batch.Queue(dbgen.CommitClaimAsynchronously)
		settings++
	}
	a := p.Args
	batch.Queue(c.qualified(claimSQL), a.Now, a.Cutoff, a.Demand, a.MaxAttempts, a.Preference)
	if more != nil {
		more(batch)
	}
	results := c.pool.SendBatch(ctx, batch)
	rows, err := readClaimBatch(results, settings, readMore)
	// Close reports a failed commit of the batch's implicit transaction.
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// readClaimBatch reads the results of a claim batch in order: its leading
// settings statements, the claim's rows, then, through readMore when set,
// the rest.
func readClaimBatch(results pgx.BatchResults, settings int, readMore func(pgx.BatchResults) error) ([]claimpolicy.Row, error) {
	for range settings {
		if _, err := results.Exec(); err != nil {
			return nil, err
		}
	}
	claimRows, err := results.Query()
	if err != nil {
		return nil, err
	}
	// Every production claim statement returns the columns of claimpolicy.Row
	// in its order.
	rows, err := pgx.CollectRows(claimRows, pgx.RowToStructByPos[claimpolicy.Row])
	if err != nil {
		return nil, err
	}
	if readMore != nil {
		if err := readMore(results); err != nil {
			return nil, err
		}
	}
	return rows, nil
}
