package docket

import "github.com/docketrun/docket-go/internal/dbgen"

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
