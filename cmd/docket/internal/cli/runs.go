package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket-go/docket"
)

const runsUsage = `docket runs <action> [--database-url URL] [--schema NAME]
  list                    runs of every scope (or one), newest first, one page
  show TENANT RUN_ID      one run's state, checkpoint, claim and admission
  cancel TENANT RUN_ID    cancel an unfinished run, revoking any claim
  resume TENANT RUN_ID    send a waiting run back to work, queued
  retry-poisoned TENANT RUN_ID
                          revive a poisoned run, attempts and abandons reset
  retry TENANT RUN_ID     send a failed or cancelled run back to work, queued
  prune                   delete runs that finished before a cutoff, in batches
  TENANT                  a tenant id, or a scope as a list prints it:
                          tenant:ID or tenantless
  --tenantless            address the tenantless scope instead of a TENANT
  --force                 retry: also retry a done run
  --finished-before T     prune: a duration before now (90m, 72h, 30d) or an
                          RFC 3339 timestamp; required
  --batch N               prune: runs per batch, 1..10000 (default 1000)
  docket runs ACTION --help prints the flags of list, show, cancel, resume
  and retry-poisoned. A refused transition (such as retrying a run that is
  not failed or cancelled, or done without --force) changes nothing and exits
  2; a missing run exits 1. Prune prints each batch and the total; it needs a
  role with DELETE on docket_runs.
`

// runsArgs are the parsed arguments of one runs action.
type runsArgs struct {
	conn           connectionFlags
	tenantless     bool
	force          bool
	finishedBefore string
	batch          int
	tenant         string
	status         string
	phase          string
	graph          string
	limit          int
	after          string
	json           bool
	positional     []string
	// given names the flags present on the command line.
	given  map[string]bool
	scope  docket.Scope
	runID  string
	cutoff time.Time
	cursor *docket.RunCursor
}

// runsAction is one "docket runs" action: the flags it takes beyond the
// connection flags, how its arguments are checked and how it runs against
// an Admin.
type runsAction struct {
	flags []string
	check func(a *runsArgs, now time.Time) error
	run   func(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error
}

var runsActions = map[string]runsAction{
	"list":           {flags: []string{"tenant", "tenantless", "status", "phase", "graph", "limit", "after", "json"}, check: checkListArgs, run: runsList},
	"show":           {flags: []string{"tenantless", "json"}, check: checkRunAddress, run: runsShow},
	"cancel":         {flags: []string{"tenantless"}, check: checkRunAddress, run: runsCancel},
	"resume":         {flags: []string{"tenantless"}, check: checkRunAddress, run: runsResume},
	"retry-poisoned": {flags: []string{"tenantless"}, check: checkRunAddress, run: runsRetryPoisoned},
	"retry":          {flags: []string{"tenantless", "force"}, check: checkRunAddress, run: runsRetry},
	"prune":          {flags: []string{"finished-before", "batch"}, check: checkPruneArgs, run: runsPrune},
}

// checkFlags refuses a flag the action does not take.
func (r runsAction) checkFlags(a runsArgs, name string) error {
	for _, flagName := range slices.Sorted(maps.Keys(a.given)) {
		if flagName != "database-url" && flagName != "schema" && !slices.Contains(r.flags, flagName) {
			return fmt.Errorf("--%s does not apply to runs %s", flagName, name)
		}
	}
	return nil
}

// runRuns implements "docket runs".
func runRuns(ctx context.Context, args []string, out output) int {
	if len(args) == 0 {
		return out.failf(ExitUsage, "runs: missing action\n\n%s", runsUsage)
	}
	action, ok := runsActions[args[0]]
	if !ok {
		return out.failf(ExitUsage, "runs: unknown action %s\n\n%s", quoteArg(args[0]), runsUsage)
	}
	usage := runsUsage
	if own, ok := runsActionUsage[args[0]]; ok {
		usage = own
	}
	a, err := parseRunsArgs(args[1:])
	if err != nil {
		return out.usageError("runs "+args[0], err, usage)
	}
	err = action.checkFlags(a, args[0])
	if err == nil {
		err = action.check(&a, time.Now())
	}
	if err != nil {
		return out.failf(ExitUsage, "runs %s: %v\n\n%s", args[0], err, usage)
	}
	return withAdmin(ctx, a.conn, "runs "+args[0], out, runsExitCode, func(admin *docket.Admin) error {
		return inCLITerms(action.run(ctx, admin, a, out))
	})
}

func parseRunsArgs(args []string) (runsArgs, error) {
	var a runsArgs
	fs := newFlagSet("runs", &a.conn)
	fs.BoolVar(&a.tenantless, "tenantless", false, "address the tenantless scope")
	fs.BoolVar(&a.force, "force", false, "also retry a done run")
	fs.StringVar(&a.finishedBefore, "finished-before", "", "retention cutoff")
	fs.IntVar(&a.batch, "batch", docket.DefaultRetentionBatch, "runs per batch")
	fs.StringVar(&a.tenant, "tenant", "", "list: only this tenant's runs")
	fs.StringVar(&a.status, "status", "", "list: only runs with this status")
	fs.StringVar(&a.phase, "phase", "", "list: only runs in this phase")
	fs.StringVar(&a.graph, "graph", "", "list: only runs of this graph")
	fs.IntVar(&a.limit, "limit", docket.DefaultListLimit, "list: page size")
	fs.StringVar(&a.after, "after", "", "list: continue after this cursor")
	fs.BoolVar(&a.json, "json", false, "JSON output")
	var err error
	a.positional, a.given, err = parseOperands(fs, args)
	return a, err
}

// checkRunAddress resolves the scope and run id of an action on one run.
func checkRunAddress(a *runsArgs, _ time.Time) error {
	operands := a.positional
	var err error
	a.scope, operands, err = leadingScope(a.tenantless, operands)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return fmt.Errorf("want RUN_ID after the scope, got %d argument(s)", len(operands))
	}
	a.runID = operands[0]
	return nil
}

// checkPruneArgs resolves the cutoff of "runs prune" against now.
func checkPruneArgs(a *runsArgs, now time.Time) error {
	switch {
	case len(a.positional) != 0:
		return fmt.Errorf("prune takes no arguments, got %s", quoteArgs(a.positional))
	case a.finishedBefore == "":
		return errors.New("missing --finished-before")
	case a.batch < 1 || a.batch > docket.MaxRetentionBatch:
		return fmt.Errorf("--batch %d is outside 1..%d", a.batch, docket.MaxRetentionBatch)
	}
	cutoff, err := parseCutoff(a.finishedBefore, now)
	if err != nil {
		return err
	}
	a.cutoff = cutoff
	return nil
}

// parseCutoff reads an RFC 3339 timestamp, or a non-negative duration before
// now in Go's syntax or as whole days ("30d").
func parseCutoff(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 0 || n > int64(maxCutoffAge/(24*time.Hour)) {
			return time.Time{}, fmt.Errorf("--finished-before %s: not a day count in 0..%d", quoteArg(s), int64(maxCutoffAge/(24*time.Hour)))
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		parsed, err := time.ParseDuration(s)
		if err != nil || parsed < 0 {
			return time.Time{}, fmt.Errorf("--finished-before %s: want a non-negative duration (90m, 72h, 30d) or an RFC 3339 timestamp", quoteArg(s))
		}
		d = parsed
	}
	return now.Add(-d), nil
}

// maxCutoffAge bounds a day count so that it converts to a Duration without
// overflow.
const maxCutoffAge = time.Duration(1<<63 - 1)

// runsExitCode maps refusals to exit codes; nothing was written for any of
// them.
func runsExitCode(err error) int {
	switch {
	case errors.Is(err, docket.ErrInvalidTransition), errors.Is(err, docket.ErrInvalidArgument),
		errors.Is(err, docket.ErrTenantRequired):
		return ExitUsage
	}
	return ExitFailure
}

func runsRetry(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	r, err := admin.RetryRun(ctx, a.scope, a.runID, docket.RetryRunOptions{Force: a.force})
	if err != nil {
		return err
	}
	printRunSummary(out, r)
	return nil
}

func runsPrune(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	batches := 0
	total, err := admin.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{
		FinishedBefore: a.cutoff,
		BatchSize:      a.batch,
		OnBatch: func(deleted, total int64) {
			batches++
			fmt.Fprintf(out.stdout, "batch %d: deleted %d (total %d)\n", batches, deleted, total)
		},
	})
	if err != nil {
		return fmt.Errorf("after deleting %d run(s): %w", total, err)
	}
	out.field("finished_before", a.cutoff.UTC().Format(time.RFC3339Nano))
	out.field("deleted", total)
	return nil
}
