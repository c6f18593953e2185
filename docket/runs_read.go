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
		scopeKey, err := c.runScopeKey(req.Scope)
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
	scopeKey, err := c.runScopeKey(scope)
	if err != nil {
		return "", err
	}
	return scopeKey, requireRunID(runID)
}
