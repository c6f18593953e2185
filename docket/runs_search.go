package docket

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// SearchRunsRequest selects one page of the runs whose run id starts with a
// prefix, in run id order. It is operator tooling: an exact id is the
// prefix that is the whole id, and sorts first among its matches.
type SearchRunsRequest struct {
	// Prefix is the start of the run ids to find: required, at most
	// MaxIdentifierBytes bytes, free of U+0000.
	Prefix string
	// Scope keeps only this scope's runs when set; nil searches every
	// scope.
	Scope *Scope
	// GraphID keeps only runs of this workflow when non-empty.
	GraphID string
	// Status keeps only runs of this status when non-empty.
	Status RunStatus
	// Phase keeps only runs in this phase at the database clock of the read
	// when non-empty; a value that is not a RunPhase is ErrInvalidArgument.
	Phase RunPhase
	// After continues strictly after this run id, the last of the previous
	// page; "" starts at the first match.
	After string
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// RunSearchPage is one page of SearchRuns.
type RunSearchPage struct {
	// Runs are in run id order: byte order of the ids' UTF-8, whatever the
	// database's collation.
	Runs []Run
	// Next is the run id to continue after; "" when this is the last page.
	Next string
}

// SearchRuns returns one page of the runs whose id starts with req.Prefix,
// in run id byte order, continuing strictly after req.After. The prefix is
// one range of an index in byte order, so the cost follows the matches, not
// the domain's size; the other filters are checked on the matches only. A
// prefix made only of U+10FFFF, which no string sorts above, is
// ErrInvalidArgument, as are an empty or unstorable prefix and bad filters.
func (c *store) SearchRuns(ctx context.Context, req SearchRunsRequest) (RunSearchPage, error) {
	return timed(ctx, c.telemetry, opSearchRuns, func() (RunSearchPage, error) {
		f, err := checkListFilter(req.GraphID, req.Status, req.Phase, nil, req.Limit)
		if err != nil {
			return RunSearchPage{}, err
		}
		switch {
		case req.Prefix == "":
			return RunSearchPage{}, invalidArgument("run id prefix is empty")
		case len(req.Prefix) > MaxIdentifierBytes:
			return RunSearchPage{}, invalidArgument("run id prefix is %d bytes, over the %d-byte limit of run ids", len(req.Prefix), MaxIdentifierBytes)
		}
		for field, v := range map[string]string{"run id prefix": req.Prefix, "cursor run id": req.After} {
			if err := requireStorable(field, v); err != nil {
				return RunSearchPage{}, err
			}
		}
		end, ok := prefixEnd(req.Prefix)
		if !ok {
			return RunSearchPage{}, invalidArgument("run id prefix %q is only U+10FFFF, above which no id sorts", req.Prefix)
		}
		params := dbgen.SearchRunsParams{
			Prefix: req.Prefix, PrefixEnd: end, AfterRunID: req.After,
			GraphID: f.graphID, Status: f.status, Phase: f.phase, PageLimit: int32(f.limit + 1),
		}
		if req.Scope != nil {
			key, err := c.scopeKey(*req.Scope)
			if err != nil {
				return RunSearchPage{}, err
			}
			params.ScopeKey = &key
		}
		rows, err := c.queries.SearchRuns(ctx, params)
		if err != nil {
			return RunSearchPage{}, fmt.Errorf("docket: search runs: %w", err)
		}
		page := pageOf(phased(rows), f.limit)
		out := RunSearchPage{Runs: page.Runs}
		if page.Next != nil {
			out.Next = page.Next.RunID
		}
		return out, nil
	})
}

// prefixEnd returns the least string above every string that starts with
// prefix in byte order: prefix without its trailing U+10FFFF runes, its last
// rune then raised by one (over the surrogates, which UTF-8 never holds).
// ok is false for a prefix of U+10FFFF runes only, which has none.
func prefixEnd(prefix string) (end string, ok bool) {
	for prefix != "" {
		r, size := utf8.DecodeLastRuneInString(prefix)
		prefix = prefix[:len(prefix)-size]
		if r == utf8.MaxRune {
			continue
		}
		next := r + 1
		if next == 0xD800 {
			next = 0xE000
		}
		return prefix + string(next), true
	}
	return "", false
}

// QueueCursor is an exclusive ListQueuedRuns position: the last run of a
// page.
type QueueCursor struct {
	// WakeAt is the due time of the last listed run.
	WakeAt time.Time
	// RunID is its run id.
	RunID string
}

// ListQueuedRunsRequest selects one page of queued runs (PhaseQueued) in
// admission order.
type ListQueuedRunsRequest struct {
	// Scope keeps only this scope's runs when set; nil lists every scope.
	Scope *Scope
	// GraphID keeps only runs of this workflow when non-empty.
	GraphID string
	// StartedFrom keeps only runs started at or after it when non-zero.
	StartedFrom time.Time
	// StartedBefore keeps only runs started before it when non-zero.
	StartedBefore time.Time
	// After continues strictly after this cursor; nil starts at the oldest.
	After *QueueCursor
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// QueuedRunPage is one page of ListQueuedRuns.
type QueuedRunPage struct {
	// Runs are in admission order, oldest first.
	Runs []Run
	// Next continues the listing; nil when this is the last page.
	Next *QueueCursor
}

// ListQueuedRuns returns one page of the runs queued now (due, unclaimed,
// unadmitted, of a tenant that is not paused) in admission order: by due
// time (WakeAt), then by insertion, oldest first. That is the order in
// which a scope's FIFO admits its runs, so a scope's page lists them as
// TenantFair will take them; across scopes the ring interleaves the scopes'
// FIFOs, and the page is the domain's queue by age. Each page walks an index
// in that order. A cursor whose run was deleted since continues after its
// due time.
func (c *store) ListQueuedRuns(ctx context.Context, req ListQueuedRunsRequest) (QueuedRunPage, error) {
	return timed(ctx, c.telemetry, opListQueuedRuns, func() (QueuedRunPage, error) {
		f, err := checkListFilter(req.GraphID, "", "", nil, req.Limit)
		if err != nil {
			return QueuedRunPage{}, err
		}
		for name, t := range map[string]time.Time{"StartedFrom": req.StartedFrom, "StartedBefore": req.StartedBefore} {
			if !t.IsZero() {
				if err := requireStorableTime(name, t); err != nil {
					return QueuedRunPage{}, err
				}
			}
		}
		if req.After != nil {
			if err := requireStorable("cursor run id", req.After.RunID); err != nil {
				return QueuedRunPage{}, err
			}
			if err := requireStorableTime("cursor WakeAt", req.After.WakeAt); err != nil {
				return QueuedRunPage{}, err
			}
		}
		var scopeKey *string
		if req.Scope != nil {
			key, err := c.scopeKey(*req.Scope)
			if err != nil {
				return QueuedRunPage{}, err
			}
			scopeKey = &key
		}
		rows, err := c.queuedRows(ctx, req, scopeKey, f)
		if err != nil {
			return QueuedRunPage{}, fmt.Errorf("docket: list queued runs: %w", err)
		}
		var page QueuedRunPage
		if len(rows) > f.limit {
			rows = rows[:f.limit]
			last := rows[f.limit-1].DocketRun
			page.Next = &QueueCursor{RunID: last.RunID}
			if last.WakeAt != nil {
				page.Next.WakeAt = *last.WakeAt
			}
		}
		page.Runs = make([]Run, len(rows))
		for i, row := range rows {
			page.Runs[i] = runWithPhase(row.DocketRun, row.Phase)
		}
		return page, nil
	})
}

// queuedRows runs the ListQueuedRuns statement of the scope (nil for
// every scope) and req's cursor, fetching one row beyond the page.
func (c *store) queuedRows(ctx context.Context, req ListQueuedRunsRequest, scopeKey *string, f listFilter) ([]phasedRow, error) {
	from, before := optionalTime(req.StartedFrom), optionalTime(req.StartedBefore)
	pageLimit := int32(f.limit + 1)
	if scopeKey == nil {
		if req.After == nil {
			rows, err := c.queries.ListQueuedRuns(ctx, dbgen.ListQueuedRunsParams{
				GraphID: f.graphID, StartedFrom: from, StartedBefore: before, PageLimit: pageLimit,
			})
			return phased(rows), err
		}
		rows, err := c.queries.ListQueuedRunsAfter(ctx, dbgen.ListQueuedRunsAfterParams{
			AfterWakeAt: req.After.WakeAt, AfterRunID: req.After.RunID,
			GraphID: f.graphID, StartedFrom: from, StartedBefore: before, PageLimit: pageLimit,
		})
		return phased(rows), err
	}
	if req.After == nil {
		rows, err := c.queries.ListScopeQueuedRuns(ctx, dbgen.ListScopeQueuedRunsParams{
			ScopeKey: *scopeKey, GraphID: f.graphID, StartedFrom: from, StartedBefore: before, PageLimit: pageLimit,
		})
		return phased(rows), err
	}
	rows, err := c.queries.ListScopeQueuedRunsAfter(ctx, dbgen.ListScopeQueuedRunsAfterParams{
		ScopeKey: *scopeKey, AfterWakeAt: req.After.WakeAt, AfterRunID: req.After.RunID,
		GraphID: f.graphID, StartedFrom: from, StartedBefore: before, PageLimit: pageLimit,
	})
	return phased(rows), err
}
