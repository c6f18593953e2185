package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ListDomainRunsRequest selects one page of the runs of every scope of the
// domain, newest first. It is operator tooling: application code lists one
// scope with ListRuns.
type ListDomainRunsRequest struct {
	// GraphID keeps only runs of this workflow when non-empty.
	GraphID string
	// Status keeps only runs with this status when non-empty.
	Status RunStatus
	// Phase keeps only runs in this phase at the database clock of the read
	// when non-empty; a value that is not a RunPhase is ErrInvalidArgument.
	Phase RunPhase
	// After continues strictly after this cursor; nil starts at the newest.
	After *RunCursor
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// ListDomainRuns returns one page of the runs of every scope, newest first by
// (StartedAt, RunID), continuing strictly after req.After. Unlike ListRuns it
// is not served by an index in that order, so it suits operators, not hot
// paths.
func (c *store) ListDomainRuns(ctx context.Context, req ListDomainRunsRequest) (RunPage, error) {
	return timed(ctx, c.telemetry, opListDomainRuns, func() (RunPage, error) {
		f, err := checkListFilter(req.GraphID, req.Status, req.Phase, req.After, req.Limit)
		if err != nil {
			return RunPage{}, err
		}
		// One row beyond the page tells whether another page exists.
		pageLimit := int32(f.limit + 1)
		var rows []phasedRow
		if req.After == nil {
			var got []dbgen.ListDomainRunsRow
			got, err = c.queries.ListDomainRuns(ctx, dbgen.ListDomainRunsParams{
				GraphID: f.graphID, Status: f.status, Phase: f.phase, PageLimit: pageLimit,
			})
			rows = phased(got)
		} else {
			var got []dbgen.ListDomainRunsAfterRow
			got, err = c.queries.ListDomainRunsAfter(ctx, dbgen.ListDomainRunsAfterParams{
				AfterStartedAt: req.After.StartedAt, AfterRunID: req.After.RunID,
				GraphID: f.graphID, Status: f.status, Phase: f.phase, PageLimit: pageLimit,
			})
			rows = phased(got)
		}
		if err != nil {
			return RunPage{}, fmt.Errorf("docket: list domain runs: %w", err)
		}
		return pageOf(rows, f.limit), nil
	})
}
