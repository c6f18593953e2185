package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// FetchRun returns the public view of runID in scope. A run of another scope
// is ErrNotFound, exactly like a missing one.
func (c *store) FetchRun(ctx context.Context, scope Scope, runID string) (Run, error) {
	return timed(ctx, c.telemetry, opFetchRun, func() (Run, error) {
		scopeKey, err := c.runKey(scope, runID)
		if err != nil {
			return Run{}, err
		}
		row, err := c.queries.GetRun(ctx, dbgen.GetRunParams{ScopeKey: scopeKey, RunID: runID})
		if errors.Is(err, pgx.ErrNoRows) {
			return Run{}, runNotFound(runID)
		}
		if err != nil {
			return Run{}, fmt.Errorf("docket: fetch run: %w", err)
		}
		return runWithPhase(row.DocketRun, row.Phase), nil
	})
}

// InspectRun returns the token-free scheduling view of runID in scope, with
// its admission state derived at the database clock.
func (c *store) InspectRun(ctx context.Context, scope Scope, runID string) (RunInspection, error) {
	return timed(ctx, c.telemetry, opInspectRun, func() (RunInspection, error) {
		scopeKey, err := c.runKey(scope, runID)
		if err != nil {
			return RunInspection{}, err
		}
		got, err := c.queries.InspectRun(ctx, dbgen.InspectRunParams{ScopeKey: scopeKey, RunID: runID})
		if errors.Is(err, pgx.ErrNoRows) {
			return RunInspection{}, runNotFound(runID)
		}
		if err != nil {
			return RunInspection{}, fmt.Errorf("docket: inspect run: %w", err)
		}
		row := got.DocketRun
		return RunInspection{
			RunID:         row.RunID,
			Scope:         scopeOf(row.TenantID),
			Status:        RunStatus(row.Status),
			WakeAt:        row.WakeAt,
			ClaimedAt:     row.ClaimedAt,
			ClaimAttempts: int(row.ClaimAttempts),
			ClaimAbandons: int(row.ClaimAbandons),
			Attempt:       int(row.Attempt),
			Errors:        runErrors(row.Errors),
			PoisonedAt:    row.PoisonedAt,
			PoisonReason:  deref(row.PoisonReason),
			AdmittedAt:    row.TenantAdmittedAt,
			State:         admissionState(row, got.ObservedAt),
			Phase:         RunPhase(got.Phase),
			ObservedAt:    got.ObservedAt,
		}, nil
	})
}

// admissionState derives the state of row at now. The schema guarantees a
// marker only on healthy running rows.
func admissionState(row dbgen.DocketRun, now time.Time) AdmissionState {
	switch {
	case RunStatus(row.Status) != StatusRunning || row.PoisonedAt != nil:
		return AdmissionInactive
	case row.ClaimToken != nil && row.TenantAdmittedAt != nil:
		return AdmissionAdmittedClaimed
	case row.ClaimToken != nil:
		return AdmissionUnadmittedClaimed
	case row.TenantAdmittedAt != nil:
		return AdmissionAdmittedReady
	case row.WakeAt != nil && !row.WakeAt.After(now):
		return AdmissionQueued
	}
	return AdmissionInactive
}

// ListRuns returns one page of the scope's runs, newest first by
// (StartedAt, RunID), continuing strictly after req.After.
func (c *store) ListRuns(ctx context.Context, req ListRunsRequest) (RunPage, error) {
	return timed(ctx, c.telemetry, opListRuns, func() (RunPage, error) {
		scopeKey, err := c.scopeKey(req.Scope)
		if err != nil {
			return RunPage{}, err
		}
		f, err := checkListFilter(req.GraphID, req.Status, req.Phase, req.After, req.Limit)
		if err != nil {
			return RunPage{}, err
		}
		graphID, status, phase, limit := f.graphID, f.status, f.phase, f.limit
		// One row beyond the page tells whether another page exists.
		pageLimit := int32(limit + 1)
		var rows []phasedRow
		if req.After == nil {
			var got []dbgen.ListRunsRow
			got, err = c.queries.ListRuns(ctx, dbgen.ListRunsParams{
				ScopeKey: scopeKey, GraphID: graphID, Status: status, Phase: phase, PageLimit: pageLimit,
			})
			rows = phased(got)
		} else {
			var got []dbgen.ListRunsAfterRow
			got, err = c.queries.ListRunsAfter(ctx, dbgen.ListRunsAfterParams{
				ScopeKey: scopeKey, AfterStartedAt: req.After.StartedAt, AfterRunID: req.After.RunID,
				GraphID: graphID, Status: status, Phase: phase, PageLimit: pageLimit,
			})
			rows = phased(got)
		}
		if err != nil {
			return RunPage{}, fmt.Errorf("docket: list runs: %w", err)
		}
		return pageOf(rows, limit), nil
	})
}

// runKey validates a run address and returns its scope key.
func (c *store) runKey(scope Scope, runID string) (string, error) {
	scopeKey, err := c.scopeKey(scope)
	if err != nil {
		return "", err
	}
	return scopeKey, requireRunID(runID)
}

// listFilter is a validated run listing request: nil filters select all.
type listFilter struct {
	graphID *string
	status  *string
	phase   *string
	limit   int
}

// phasedRow is a run row read with its phase; every listing's row type has
// this shape, so each converts to it.
type phasedRow struct {
	DocketRun dbgen.DocketRun
	Phase     string
}

// phased converts the rows of one listing statement.
func phased[R ~struct {
	DocketRun dbgen.DocketRun
	Phase     string
}](rows []R) []phasedRow {
	out := make([]phasedRow, len(rows))
	for i, r := range rows {
		out[i] = phasedRow(r)
	}
	return out
}

// checkListFilter validates the filters, cursor and page size that ListRuns
// and ListDomainRuns share; a zero limit means DefaultListLimit.
func checkListFilter(graphID string, status RunStatus, phase RunPhase, after *RunCursor, limit int) (listFilter, error) {
	switch {
	case limit == 0:
		limit = DefaultListLimit
	case limit < 0 || limit > MaxListLimit:
		return listFilter{}, invalidArgument("list limit %d is outside 1..%d", limit, MaxListLimit)
	}
	if err := requireStorable("graph id", graphID); err != nil {
		return listFilter{}, err
	}
	if after != nil {
		if err := requireStorable("cursor run id", after.RunID); err != nil {
			return listFilter{}, err
		}
		if err := requireStorableTime("cursor StartedAt", after.StartedAt); err != nil {
			return listFilter{}, err
		}
	}
	f := listFilter{limit: limit}
	if graphID != "" {
		f.graphID = &graphID
	}
	if status != "" {
		if !status.valid() {
			return listFilter{}, invalidArgument("unknown run status %q", status)
		}
		s := string(status)
		f.status = &s
	}
	if phase != "" {
		if !phase.valid() {
			return listFilter{}, invalidArgument("unknown run phase %q", phase)
		}
		p := string(phase)
		f.phase = &p
	}
	return f, nil
}

// pageOf turns rows fetched with one row beyond limit into a page whose Next
// is set when that extra row exists.
func pageOf(rows []phasedRow, limit int) RunPage {
	var page RunPage
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1].DocketRun
		page.Next = &RunCursor{StartedAt: last.StartedAt, RunID: last.RunID}
	}
	page.Runs = make([]Run, len(rows))
	for i, row := range rows {
		page.Runs[i] = runWithPhase(row.DocketRun, row.Phase)
	}
	return page
}

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
			scopeKey, err := c.scopeKey(*req.Scope)
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
