package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// schedulesArgs are the parsed arguments of one schedules action.
type schedulesArgs struct {
	conn            connectionFlags
	tenantless      bool
	tenant          string
	limit           int
	after           string
	json            bool
	expectedVersion *int64
	cron            string
	timeZone        string
	every           time.Duration
	graph           string
	graphHash       string
	state           string
	missedTicks     string
	start           string
	positional      []string
	// given names the flags present on the command line.
	given  map[string]bool
	scope  docket.Scope
	name   string
	cursor *docket.ScheduleCursor
	begin  time.Time
}

// schedulesAction is one "docket schedules" action: the flags it takes
// beyond the connection flags, how its arguments are checked and how it runs.
type schedulesAction struct {
	flags []string
	check func(a *schedulesArgs) error
	run   func(ctx context.Context, admin *docket.Admin, a schedulesArgs, out output) error
}

var schedulesActions = map[string]schedulesAction{
	"list":   {flags: []string{"tenant", "tenantless", "limit", "after", "json"}, check: checkSchedulesList, run: schedulesList},
	"add":    {flags: []string{"tenantless", "cron", "time-zone", "every", "graph", "graph-hash", "state", "missed-ticks", "start"}, check: checkSchedulesAdd, run: schedulesAdd},
	"pause":  {flags: []string{"tenantless", "expected-version"}, check: checkScheduleAddress, run: schedulesPause},
	"resume": {flags: []string{"tenantless", "expected-version"}, check: checkScheduleAddress, run: schedulesResume},
	"remove": {flags: []string{"tenantless", "expected-version"}, check: checkScheduleAddress, run: schedulesRemove},
}

// runSchedules implements "docket schedules".
func runSchedules(ctx context.Context, args []string, out output) int {
	if len(args) == 0 {
		return out.failf(ExitUsage, "schedules: missing action\n\n%s", schedulesUsage)
	}
	action, ok := schedulesActions[args[0]]
	if !ok {
		return out.failf(ExitUsage, "schedules: unknown action %s\n\n%s", quoteArg(args[0]), schedulesUsage)
	}
	usage := schedulesActionUsage[args[0]]
	a, err := parseSchedulesArgs(args[1:])
	if err != nil {
		return out.usageError("schedules "+args[0], err, usage)
	}
	for _, name := range slices.Sorted(maps.Keys(a.given)) {
		if name != "database-url" && name != "schema" && !slices.Contains(action.flags, name) {
			return out.failf(ExitUsage, "schedules %s: --%s does not apply to schedules %s\n\n%s", args[0], name, args[0], usage)
		}
	}
	if err := action.check(&a); err != nil {
		return out.failf(ExitUsage, "schedules %s: %v\n\n%s", args[0], err, usage)
	}
	return withAdmin(ctx, a.conn, "schedules "+args[0], out, schedulesExitCode, func(admin *docket.Admin) error {
		return action.run(ctx, admin, a, out)
	})
}

func parseSchedulesArgs(args []string) (schedulesArgs, error) {
	var a schedulesArgs
	fs := newFlagSet("schedules", &a.conn)
	fs.BoolVar(&a.tenantless, "tenantless", false, "address the tenantless scope")
	fs.StringVar(&a.tenant, "tenant", "", "list: only this tenant's schedules")
	fs.IntVar(&a.limit, "limit", docket.DefaultListLimit, "list: page size")
	fs.StringVar(&a.after, "after", "", "list: continue after this cursor")
	fs.BoolVar(&a.json, "json", false, "JSON output")
	fs.StringVar(&a.cron, "cron", "", "add: cron expression")
	fs.StringVar(&a.timeZone, "time-zone", "", "add: time zone of the cron expression")
	fs.DurationVar(&a.every, "every", 0, "add: interval")
	fs.StringVar(&a.graph, "graph", "", "add: graph id of the runs")
	fs.StringVar(&a.graphHash, "graph-hash", "", "add: graph hash of the runs")
	fs.StringVar(&a.state, "state", "", "add: state document of the runs")
	fs.StringVar(&a.missedTicks, "missed-ticks", "", "add: missed-tick policy")
	fs.StringVar(&a.start, "start", "", "add: start of the ticks")
	fs.Func("expected-version", "compare-and-set version", func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %s", quoteArg(s))
		}
		a.expectedVersion = &v
		return nil
	})
	var err error
	a.positional, a.given, err = parseOperands(fs, args)
	return a, err
}

// checkScheduleAddress resolves the scope and name of an action on one
// schedule.
func checkScheduleAddress(a *schedulesArgs) error {
	operands := a.positional
	var err error
	a.scope, operands, err = leadingScope(a.tenantless, operands)
	if err != nil {
		return err
	}
	if len(operands) != 1 {
		return fmt.Errorf("want NAME after the scope, got %d argument(s)", len(operands))
	}
	a.name = operands[0]
	return nil
}

// checkSchedulesAdd resolves the address and the start of "schedules add";
// the definition itself is validated by AddSchedule.
func checkSchedulesAdd(a *schedulesArgs) error {
	if err := checkScheduleAddress(a); err != nil {
		return err
	}
	if !a.given["state"] {
		// NewSchedule.State is required, as NewRun.State is: no default
		// document here either.
		return errors.New("missing --state JSON: the state document of every run a tick inserts, such as --state '{}'")
	}
	if a.given["start"] {
		start, err := time.Parse(time.RFC3339Nano, a.start)
		if err != nil {
			return fmt.Errorf("--start %s is not an RFC 3339 time", quoteArg(a.start))
		}
		a.begin = start
	}
	return nil
}

// checkSchedulesList validates the filter, page size and cursor of
// "schedules list".
func checkSchedulesList(a *schedulesArgs) error {
	switch {
	case len(a.positional) != 0:
		return fmt.Errorf("list takes no arguments, got %s", quoteArgs(a.positional))
	case a.given["tenant"] && a.tenantless:
		return errors.New("--tenant and --tenantless exclude each other")
	case a.given["tenant"] && a.tenant == "":
		return errors.New("--tenant needs a tenant id")
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
		cursor, err := parseScheduleCursor(a.after)
		if err != nil {
			return err
		}
		a.cursor = &cursor
	}
	return nil
}

// formatScheduleCursor writes a cursor as SCOPE/NAME. Names hold no "/", so
// the last one ends the scope whatever the tenant id holds.
func formatScheduleCursor(c docket.ScheduleCursor) string {
	return c.Scope.String() + "/" + c.Name
}

// parseScheduleCursor reads what formatScheduleCursor wrote.
func parseScheduleCursor(s string) (docket.ScheduleCursor, error) {
	cut := strings.LastIndex(s, "/")
	if cut < 0 || cut == len(s)-1 {
		return docket.ScheduleCursor{}, fmt.Errorf("--after %s: want SCOPE/NAME as a previous page printed", quoteArg(s))
	}
	scope, err := parseScope(s[:cut])
	if err != nil {
		return docket.ScheduleCursor{}, fmt.Errorf("--after %w", err)
	}
	return docket.ScheduleCursor{Scope: scope, Name: s[cut+1:]}, nil
}

// schedulesExitCode maps refusals to exit codes; nothing was written for any
// of them.
func schedulesExitCode(err error) int {
	switch {
	case errors.Is(err, docket.ErrStale):
		return ExitStale
	case errors.Is(err, docket.ErrInvalidArgument), errors.Is(err, docket.ErrTenantRequired),
		errors.Is(err, docket.ErrDuplicateSchedule):
		return ExitUsage
	}
	return ExitFailure
}

func schedulesList(ctx context.Context, admin *docket.Admin, a schedulesArgs, out output) error {
	req := docket.ListSchedulesRequest{After: a.cursor, Limit: a.limit}
	if a.given["tenant"] || a.tenantless {
		scope := a.scope
		req.Scope = &scope
	}
	page, err := admin.ListSchedules(ctx, req)
	if err != nil {
		return err
	}
	if a.json {
		return printScheduleLines(out, page)
	}
	printScheduleTable(out, page)
	return nil
}

func schedulesAdd(ctx context.Context, admin *docket.Admin, a schedulesArgs, out output) error {
	s, err := admin.AddSchedule(ctx, docket.NewSchedule{
		Scope: a.scope, Name: a.name, GraphID: a.graph, GraphHash: a.graphHash,
		State: json.RawMessage(a.state), Cron: a.cron, Every: a.every, TimeZone: a.timeZone,
		MissedTicks: docket.MissedTicks(a.missedTicks), Start: a.begin,
	})
	if err != nil {
		return err
	}
	printSchedule(out, s)
	return nil
}

func schedulesPause(ctx context.Context, admin *docket.Admin, a schedulesArgs, out output) error {
	s, err := admin.PauseSchedule(ctx, a.scope, a.name, docket.ScheduleWriteOptions{ExpectedVersion: a.expectedVersion})
	if err != nil {
		return err
	}
	printSchedule(out, s)
	return nil
}

func schedulesResume(ctx context.Context, admin *docket.Admin, a schedulesArgs, out output) error {
	s, err := admin.ResumeSchedule(ctx, a.scope, a.name, docket.ScheduleWriteOptions{ExpectedVersion: a.expectedVersion})
	if err != nil {
		return err
	}
	printSchedule(out, s)
	return nil
}

func schedulesRemove(ctx context.Context, admin *docket.Admin, a schedulesArgs, out output) error {
	if err := admin.RemoveSchedule(ctx, a.scope, a.name, docket.ScheduleWriteOptions{ExpectedVersion: a.expectedVersion}); err != nil {
		return err
	}
	out.field("scope", a.scope)
	out.field("name", a.name)
	out.field("removed", "yes")
	return nil
}
