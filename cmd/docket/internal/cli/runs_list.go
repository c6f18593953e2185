package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/docketrun/docket-go/docket"
)

// runStatuses is the run status domain, as --status takes it.
var runStatuses = []docket.RunStatus{
	docket.StatusRunning, docket.StatusWaiting, docket.StatusDone, docket.StatusFailed, docket.StatusCancelled,
}

// checkListArgs validates the filters, page size and cursor of "runs list".
func checkListArgs(a *runsArgs, _ time.Time) error {
	switch {
	case len(a.positional) != 0:
		return fmt.Errorf("list takes no arguments, got %s", quoteArgs(a.positional))
	case a.given["tenant"] && a.tenantless:
		return errors.New("--tenant and --tenantless exclude each other")
	case a.given["tenant"] && a.tenant == "":
		return errors.New("--tenant needs a tenant id")
	case a.given["status"] && !slices.Contains(runStatuses, docket.RunStatus(a.status)):
		return fmt.Errorf("--status %s is not one of %s", quoteArg(a.status), statusList())
	case a.given["phase"] && !slices.Contains(docket.RunPhases(), docket.RunPhase(a.phase)):
		return fmt.Errorf("--phase %s is not one of %s", quoteArg(a.phase), phaseList())
	case a.limit < 1 || a.limit > docket.MaxListLimit:
		return fmt.Errorf("--limit %d is outside 1..%d", a.limit, docket.MaxListLimit)
	}
	if a.given["tenant"] {
		scope, err := parseScope(a.tenant)
		if err != nil {
			return fmt.Errorf("--tenant %w", err)
		}
		a.scope = scope
	}
	if a.given["after"] {
		cursor, err := parseRunCursor(a.after)
		if err != nil {
			return err
		}
		a.cursor = &cursor
	}
	return nil
}

// statusList names the run statuses for an error message.
func statusList() string {
	names := make([]string, len(runStatuses))
	for i, s := range runStatuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// phaseList names the run phases for an error message.
func phaseList() string {
	phases := docket.RunPhases()
	names := make([]string, len(phases))
	for i, p := range phases {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// formatRunCursor writes a cursor as STARTED_AT/RUN_ID. An RFC 3339 time
// has no "/", so the first one ends it whatever the run id holds.
func formatRunCursor(c docket.RunCursor) string {
	return c.StartedAt.UTC().Format(time.RFC3339Nano) + "/" + c.RunID
}

// parseRunCursor reads a cursor formatRunCursor wrote.
func parseRunCursor(s string) (docket.RunCursor, error) {
	startedAt, runID, ok := strings.Cut(s, "/")
	if !ok || runID == "" {
		return docket.RunCursor{}, fmt.Errorf("--after %s: want STARTED_AT/RUN_ID as a page printed it", quoteArg(s))
	}
	t, err := time.Parse(time.RFC3339Nano, startedAt)
	if err != nil {
		return docket.RunCursor{}, fmt.Errorf("--after %s: the start time is not RFC 3339", quoteArg(s))
	}
	return docket.RunCursor{StartedAt: t, RunID: runID}, nil
}

func runsList(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	status, phase := docket.RunStatus(a.status), docket.RunPhase(a.phase)
	var page docket.RunPage
	var err error
	if a.tenantless || a.given["tenant"] {
		page, err = admin.ListRuns(ctx, docket.ListRunsRequest{
			Scope: a.scope, GraphID: a.graph, Status: status, Phase: phase, After: a.cursor, Limit: a.limit,
		})
	} else {
		page, err = admin.ListDomainRuns(ctx, docket.ListDomainRunsRequest{
			GraphID: a.graph, Status: status, Phase: phase, After: a.cursor, Limit: a.limit,
		})
	}
	if err != nil {
		return err
	}
	if a.json {
		return printRunLines(out, page)
	}
	printRunTable(out, page)
	return nil
}

// runLine is the JSON form of one listed run.
type runLine struct {
	RunID         string  `json:"run_id"`
	Scope         string  `json:"scope"`
	TenantID      *string `json:"tenant_id"`
	GraphID       string  `json:"graph_id"`
	Status        string  `json:"status"`
	Phase         string  `json:"phase"`
	Step          int     `json:"step"`
	CheckpointSeq int64   `json:"checkpoint_seq"`
	Claimed       bool    `json:"claimed"`
	WakeAt        *string `json:"wake_at"`
	StartedAt     string  `json:"started_at"`
	UpdatedAt     string  `json:"updated_at"`
	Attempt       int     `json:"attempt"`
	LastError     *string `json:"last_error"`
}

// nextLine is the JSON line that ends a page with more after it.
type nextLine struct {
	Next string `json:"next"`
}

func printRunLines(out output, page docket.RunPage) error {
	enc := json.NewEncoder(out.stdout)
	for _, r := range page.Runs {
		line := runLine{
			RunID: r.RunID, Scope: r.Scope.String(), GraphID: r.GraphID, Status: string(r.Status),
			Phase: string(r.Phase), Step: r.Step, CheckpointSeq: r.CheckpointSeq, Claimed: r.Claimed(), WakeAt: optionalTime(r.WakeAt),
			StartedAt: timeText(r.StartedAt), UpdatedAt: timeText(r.UpdatedAt), Attempt: r.Attempt,
		}
		if text, ok := lastError(r); ok {
			line.LastError = &text
		}
		if id, ok := r.Scope.TenantID(); ok {
			line.TenantID = &id
		}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("write run: %w", err)
		}
	}
	if page.Next != nil {
		if err := enc.Encode(nextLine{Next: formatRunCursor(*page.Next)}); err != nil {
			return fmt.Errorf("write cursor: %w", err)
		}
	}
	return nil
}

func printRunTable(out output, page docket.RunPage) {
	tw := tabwriter.NewWriter(out.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN_ID\tSCOPE\tGRAPH\tSTATUS\tPHASE\tATTEMPT\tSTEP\tSEQ\tCLAIMED\tWAKE_AT\tUPDATED_AT\tLAST_ERROR")
	for _, r := range page.Runs {
		wake := "-"
		if r.WakeAt != nil {
			wake = timeText(*r.WakeAt)
		}
		last, ok := lastError(r)
		if !ok {
			last = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", r.RunID, r.Scope, r.GraphID, r.Status, r.Phase,
			r.Attempt, r.Step, r.CheckpointSeq, yesNo(r.Claimed()), wake, timeText(r.UpdatedAt), last)
	}
	tw.Flush()
	if page.Next != nil {
		fmt.Fprintf(out.stdout, "next: %s\n", formatRunCursor(*page.Next))
	}
}

// lastError is the first line of the error of the run's newest failed
// attempt, as the console's runs table shows it, with tabs and other
// control characters as spaces so the table keeps its columns; false when
// the history records no failure (an operator's retry entry is none).
func lastError(r docket.Run) (string, bool) {
	for i := len(r.Errors) - 1; i >= 0; i-- {
		if e := r.Errors[i]; e.Kind != docket.ErrorKindRetry {
			line, _, _ := strings.Cut(e.Error, "\n")
			return strings.Map(func(c rune) rune {
				if unicode.IsControl(c) {
					return ' '
				}
				return c
			}, line), true
		}
	}
	return "", false
}
