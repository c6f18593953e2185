package docket

import (
	"github.com/docketrun/docket-go/gen"
)

// leaseRead is what one claim call read of the runs it leased, shared by
// their jobs: the claim and the read are one batch (Client.claimDueRead).
type leaseRead struct {
	runs map[string]gen.LeasedRunsRow

	// awaiting counts the call's jobs whose verdict may still join the
	// next group commit (Job.awaited); the group commit's mutex guards it.
	awaiting int
}

// row returns the row of runID; a run the read did not find is ErrNotFound.
func (r *leaseRead) row(runID string) (gen.LeasedRunsRow, error) {
	row, found := r.runs[runID]
	if !found {
		return gen.LeasedRunsRow{}, runNotFound(runID)
	}
	return row, nil
}
