package console

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// runTable is a run list as the runs and tenant pages show it.
type runTable struct {
	Rows []runRow
	// Select adds a checkbox to each row, for the bulk form.
	Select bool
}

// runRow is one listed run and the cells derived from its phase and
// history.
type runRow struct {
	docket.Run
	// Key names the run in the bulk form (see runKey).
	Key string
	// NextWake is when a run that is not due yet (retrying or scheduled)
	// wakes; nil for any other phase.
	NextWake *time.Time
	// ClaimedSince is when the claim of an executing run was taken or last
	// refreshed; nil for any other phase.
	ClaimedSince *time.Time
	// LastError is the first line of the newest failed attempt's error
	// text, or "" when none is recorded (an operator's retry entry is no
	// failure).
	LastError string
}

// runTableOf builds the rows of runs; selectable adds the checkboxes.
func runTableOf(runs []docket.Run, selectable bool) runTable {
	t := runTable{Select: selectable, Rows: make([]runRow, len(runs))}
	for i, r := range runs {
		row := runRow{Run: r, Key: runKey(r.Scope, r.RunID)}
		switch r.Phase {
		case docket.PhaseRetrying, docket.PhaseScheduled:
			row.NextWake = r.WakeAt
		case docket.PhaseExecuting:
			row.ClaimedSince = r.ClaimedAt
		}
		for j := len(r.Errors) - 1; j >= 0; j-- {
			if e := r.Errors[j]; e.Kind != docket.ErrorKindRetry {
				row.LastError, _, _ = strings.Cut(e.Error, "\n")
				break
			}
		}
		t.Rows[i] = row
	}
	return t
}

// runKey names a run of s in a form: the escaped tenant id, a slash and the
// escaped run id; the tenantless scope has nothing before the slash.
// Escaping turns every slash of an id into %2F, so the first slash ends the
// tenant id.
func runKey(s docket.Scope, runID string) string {
	tenant, _ := s.TenantID()
	return url.PathEscape(tenant) + "/" + url.PathEscape(runID)
}

// parseRunKey reads a key runKey wrote.
func parseRunKey(key string) (docket.Scope, string, error) {
	before, after, ok := strings.Cut(key, "/")
	tenant, err1 := url.PathUnescape(before)
	runID, err2 := url.PathUnescape(after)
	if !ok || err1 != nil || err2 != nil || runID == "" {
		return docket.Scope{}, "", fmt.Errorf("%w: run %q is not a run of the list", errBadInput, key)
	}
	if before == "" {
		return docket.Tenantless, runID, nil
	}
	return docket.Tenant(tenant), runID, nil
}
