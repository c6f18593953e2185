package docket

import "github.com/docketrun/docket-go/gen"

// listFilter is a validated run listing request: nil filters select all.
type listFilter struct {
	graphID *string
	status  *string
	limit   int
}

// checkListFilter validates the filters, cursor and page size that ListRuns
// and ListDomainRuns share; a zero limit means DefaultListLimit.
func checkListFilter(graphID string, status RunStatus, after *RunCursor, limit int) (listFilter, error) {
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
	return f, nil
}

// pageOf turns rows fetched with one row beyond limit into a page whose Next
// is set when that extra row exists.
func pageOf(rows []gen.DocketRun, limit int) RunPage {
	var page RunPage
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		page.Next = &RunCursor{StartedAt: last.StartedAt, RunID: last.RunID}
	}
	page.Runs = make([]Run, len(rows))
	for i, row := range rows {
		page.Runs[i] = runFromRow(row)
	}
	return page
}
