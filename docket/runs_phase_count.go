package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// CountRunPhasesRequest selects the runs CountRunPhases counts: the filters
// of a run listing without the phase.
type CountRunPhasesRequest struct {
	// Scope counts one scope's runs only; nil counts every scope's.
	Scope *Scope
	// GraphID keeps only runs of this workflow when non-empty.
	GraphID string
	// Status keeps only runs of this status when non-empty.
	Status RunStatus
	// StartedFrom keeps only runs started at or after it when non-zero.
	StartedFrom time.Time
	// StartedBefore keeps only runs started before it when non-zero.
	StartedBefore time.Time
}

// RunPhaseCounts counts runs by phase, as CountRunPhases reads them.
type RunPhaseCounts struct {
	// Phases holds the count of each phase present; a missing phase has
	// none.
	Phases map[RunPhase]int64
	// Statuses holds the count of each status present among the same runs.
	Statuses map[RunStatus]int64
	// Total counts every selected run.
	Total int64
}

// CountRunPhases counts the selected runs by phase and by status in one
// statement, at the database clock. A count of one scope reads that scope's
// runs only; a count of every scope reads every run of the domain, which
// suits operators, not hot paths.
func (c *store) CountRunPhases(ctx context.Context, req CountRunPhasesRequest) (RunPhaseCounts, error) {
	return timed(ctx, c.telemetry, opCountRunPhases, func() (RunPhaseCounts, error) {
		f, err := checkListFilter(req.GraphID, req.Status, "", nil, 0)
		if err != nil {
			return RunPhaseCounts{}, err
		}
		for name, t := range map[string]time.Time{"StartedFrom": req.StartedFrom, "StartedBefore": req.StartedBefore} {
			if !t.IsZero() {
				if err := requireStorableTime(name, t); err != nil {
					return RunPhaseCounts{}, err
				}
			}
		}
		from, before := optionalTime(req.StartedFrom), optionalTime(req.StartedBefore)
		var rows []dbgen.ConsoleRunPhaseCountsRow
		if req.Scope != nil {
			scopeKey, err := c.runScopeKey(*req.Scope)
			if err != nil {
				return RunPhaseCounts{}, err
			}
			var got []dbgen.ConsoleScopeRunPhaseCountsRow
			got, err = c.queries.ConsoleScopeRunPhaseCounts(ctx, dbgen.ConsoleScopeRunPhaseCountsParams{
				ScopeKey: scopeKey, GraphID: f.graphID, Status: f.status, StartedFrom: from, StartedBefore: before,
			})
			if err != nil {
				return RunPhaseCounts{}, fmt.Errorf("docket: count run phases: %w", err)
			}
			for _, g := range got {
				rows = append(rows, dbgen.ConsoleRunPhaseCountsRow(g))
			}
		} else {
			rows, err = c.queries.ConsoleRunPhaseCounts(ctx, dbgen.ConsoleRunPhaseCountsParams{
				GraphID: f.graphID, Status: f.status, StartedFrom: from, StartedBefore: before,
			})
			if err != nil {
				return RunPhaseCounts{}, fmt.Errorf("docket: count run phases: %w", err)
			}
		}
		out := RunPhaseCounts{Phases: map[RunPhase]int64{}, Statuses: map[RunStatus]int64{}}
		for _, r := range rows {
			out.Phases[RunPhase(r.Phase)] += r.Runs
			out.Statuses[RunStatus(r.Status)] += r.Runs
			out.Total += r.Runs
		}
		return out, nil
	})
}

// optionalTime is t, or nil for the zero time.
func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
