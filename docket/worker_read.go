package docket

import (
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/groupcommit"
)

// leaseRead is what one claim call read of the runs it leased, shared by
// their jobs: the claim and the read are one batch (Client.claimDueRead).
type leaseRead struct {
	runs map[string]dbgen.LeasedRunsRow

	// cohort is the call's jobs in the worker's group commit.
	cohort groupcommit.Cohort
}

// row returns the row of runID; a run the read did not find is ErrNotFound.
func (r *leaseRead) row(runID string) (dbgen.LeasedRunsRow, error) {
	row, found := r.runs[runID]
	if !found {
		return dbgen.LeasedRunsRow{}, runNotFound(runID)
	}
	return row, nil
}
