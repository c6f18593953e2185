package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/docketrun/docket-go/docket"
)

const tenantsUsage = `docket tenants <action> [--database-url URL] [--schema NAME]
  list                    every partition with its effective cap and admission
  show TENANT             one scope's policy inspection (as policy inspect)
  pause TENANT            stop TenantFair admitting or leasing the scope's runs
  resume TENANT           let TenantFair admit and lease them again
  TENANT                  a tenant id, or a scope as a list prints it:
                          tenant:ID or tenantless
  docket tenants ACTION --help prints the flags of each action.
`

const tenantsListUsage = `docket tenants list [--limit N] [--after SCOPE] [--json] [--database-url URL] [--schema NAME]
  One page of the domain's partitions in scope key order (the tenantless
  scope first): effective cap and its source, admitted (claimed/ready),
  queued, debt, unfinished, admission epoch, parked and paused state.
  --limit N       page size, 1..1000 (default 100)
  --after SCOPE   continue after the scope a previous page printed:
                  tenant:ID or tenantless
  --json          one JSON object per scope, then {"next": SCOPE} when more remain
  The table ends with "next: SCOPE" when another page exists. Each scope is
  read in its own snapshot.
`

const tenantsShowUsage = `docket tenants show TENANT [--tenantless] [--database-url URL] [--schema NAME]
  The scope's effective cap, source, versions, epoch, ring position, parked
  and paused state and admission counts; docket policy inspect prints the
  same.
  --tenantless    address the tenantless scope instead of a TENANT
`

const tenantsPauseUsage = `docket tenants pause TENANT [--tenantless] [--expected-version V] [--database-url URL] [--schema NAME]
  Pauses the scope: TenantFair claim calls still visit its partition and
  refuse it, so none of its runs is admitted, leased or stolen, while its
  claimed runs finish as usual and the rest keep their order. Legacy ignores
  the pause. Creates the partition if the scope has none and moves its
  partition version.
  --expected-version V    apply only at partition version V (else exit 3)
  --tenantless            address the tenantless scope instead of a TENANT
`

const tenantsResumeUsage = `docket tenants resume TENANT [--tenantless] [--expected-version V] [--database-url URL] [--schema NAME]
  Resumes a paused scope: its runs are admitted and leased again in their
  order, and listening workers are woken. Moves the partition version.
  --expected-version V    apply only at partition version V (else exit 3)
  --tenantless            address the tenantless scope instead of a TENANT
`

// tenantsActionUsage maps each tenants action to its usage.
var tenantsActionUsage = map[string]string{
	"list":   tenantsListUsage,
	"show":   tenantsShowUsage,
	"pause":  tenantsPauseUsage,
	"resume": tenantsResumeUsage,
}

// tenantsArgs are the parsed arguments of one tenants action.
type tenantsArgs struct {
	conn       connectionFlags
	tenantless bool
	limit      int
	after      string
	json       bool
	expected   *int64
	positional []string
	given      map[string]bool
	scope      docket.Scope
	cursor     *docket.Scope
}

// runTenants implements "docket tenants".
func runTenants(ctx context.Context, args []string, out output) int {
	if len(args) == 0 {
		return out.failf(ExitUsage, "tenants: missing action\n\n%s", tenantsUsage)
	}
	usage, ok := tenantsActionUsage[args[0]]
	if !ok {
		return out.failf(ExitUsage, "tenants: unknown action %s\n\n%s", quoteArg(args[0]), tenantsUsage)
	}
	a, err := parseTenantsArgs(args[1:])
	if err != nil {
		return out.usageError("tenants "+args[0], err, usage)
	}
	run := tenantsList
	check := checkTenantsList
	switch args[0] {
	case "show":
		run, check = tenantsShow, checkTenantsShow
	case "pause":
		run, check = tenantsPause, checkTenantsWrite
	case "resume":
		run, check = tenantsResume, checkTenantsWrite
	}
	if err := check(&a); err != nil {
		return out.failf(ExitUsage, "tenants %s: %v\n\n%s", args[0], err, usage)
	}
	return withAdmin(ctx, a.conn, "tenants "+args[0], out, policyExitCode, func(admin *docket.Admin) error {
		return run(ctx, admin, a, out)
	})
}

func parseTenantsArgs(args []string) (tenantsArgs, error) {
	var a tenantsArgs
	fs := newFlagSet("tenants", &a.conn)
	fs.BoolVar(&a.tenantless, "tenantless", false, "address the tenantless scope")
	fs.IntVar(&a.limit, "limit", docket.DefaultListLimit, "page size")
	fs.StringVar(&a.after, "after", "", "continue after this scope")
	fs.BoolVar(&a.json, "json", false, "JSON output")
	fs.Func("expected-version", "compare-and-set partition version", func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %s", quoteArg(s))
		}
		a.expected = &v
		return nil
	})
	var err error
	a.positional, a.given, err = parseOperands(fs, args)
	return a, err
}

// checkTenantsList validates the page size and cursor of "tenants list".
func checkTenantsList(a *tenantsArgs) error {
	switch {
	case a.given["tenantless"]:
		return errors.New("--tenantless applies to show, pause and resume only")
	case a.given["expected-version"]:
		return errors.New("--expected-version applies to pause and resume only")
	case len(a.positional) != 0:
		return fmt.Errorf("list takes no arguments, got %s", quoteArgs(a.positional))
	case a.limit < 1 || a.limit > docket.MaxListLimit:
		return fmt.Errorf("--limit %d is outside 1..%d", a.limit, docket.MaxListLimit)
	}
	if a.given["after"] {
		scope, err := parseScope(a.after)
		if err != nil {
			return fmt.Errorf("--after %w", err)
		}
		a.cursor = &scope
	}
	return nil
}

// checkTenantsShow resolves the scope of "tenants show".
func checkTenantsShow(a *tenantsArgs) error {
	if a.given["expected-version"] {
		return errors.New("--expected-version applies to pause and resume only")
	}
	return checkTenantsScope(a)
}

// checkTenantsWrite resolves the scope of "tenants pause" and "tenants
// resume".
func checkTenantsWrite(a *tenantsArgs) error {
	return checkTenantsScope(a)
}

// checkTenantsScope resolves the one scope operand of show, pause and resume.
func checkTenantsScope(a *tenantsArgs) error {
	if a.given["limit"] || a.given["after"] || a.given["json"] {
		return errors.New("--limit, --after and --json apply to list only")
	}
	scope, rest, err := leadingScope(a.tenantless, a.positional)
	switch {
	case err != nil:
		return err
	case a.tenantless && len(rest) != 0:
		return fmt.Errorf("--tenantless takes no TENANT, got %s", quoteArgs(rest))
	case len(rest) != 0:
		return fmt.Errorf("want one TENANT (or --tenantless), got %d argument(s)", len(a.positional))
	}
	a.scope = scope
	return nil
}

func tenantsShow(ctx context.Context, admin *docket.Admin, a tenantsArgs, out output) error {
	i, err := admin.InspectClaimPolicy(ctx, a.scope)
	if err != nil {
		return err
	}
	printInspection(out, i)
	return nil
}

func tenantsPause(ctx context.Context, admin *docket.Admin, a tenantsArgs, out output) error {
	p, err := admin.PauseTenant(ctx, a.scope, docket.ClaimPolicyWriteOptions{ExpectedVersion: a.expected})
	if err != nil {
		return err
	}
	printPause(out, p)
	return nil
}

func tenantsResume(ctx context.Context, admin *docket.Admin, a tenantsArgs, out output) error {
	p, err := admin.ResumeTenant(ctx, a.scope, docket.ClaimPolicyWriteOptions{ExpectedVersion: a.expected})
	if err != nil {
		return err
	}
	printPause(out, p)
	return nil
}

func tenantsList(ctx context.Context, admin *docket.Admin, a tenantsArgs, out output) error {
	page, err := admin.ListTenants(ctx, docket.ListTenantsRequest{After: a.cursor, Limit: a.limit})
	if err != nil {
		return err
	}
	if a.json {
		return printTenantLines(out, page)
	}
	printTenantTable(out, page)
	return nil
}

// tenantLine is the JSON form of one listed scope.
type tenantLine struct {
	Scope                  string  `json:"scope"`
	EffectiveMaxActiveRuns int     `json:"effective_max_active_runs"`
	Source                 string  `json:"source"`
	Admitted               int64   `json:"admitted"`
	AdmittedClaimed        int64   `json:"admitted_claimed"`
	AdmittedReady          int64   `json:"admitted_ready"`
	Queued                 int64   `json:"queued"`
	Debt                   int64   `json:"debt"`
	Unfinished             int64   `json:"unfinished"`
	AdmissionEpoch         int64   `json:"admission_epoch"`
	Parked                 bool    `json:"parked"`
	ParkedUntil            *string `json:"parked_until"`
	Paused                 bool    `json:"paused"`
}

func printTenantLines(out output, page docket.TenantPage) error {
	enc := json.NewEncoder(out.stdout)
	for _, i := range page.Tenants {
		line := tenantLine{
			Scope: i.Scope.String(), EffectiveMaxActiveRuns: i.EffectiveMaxActiveRuns, Source: string(i.Source),
			Admitted: i.Admitted, AdmittedClaimed: i.AdmittedClaimed, AdmittedReady: i.AdmittedReady,
			Queued: i.Queued, Debt: i.Debt, Unfinished: i.Unfinished, AdmissionEpoch: i.AdmissionEpoch,
			Parked: i.Parked, ParkedUntil: optionalTime(i.ParkedUntil), Paused: i.Paused,
		}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("write scope: %w", err)
		}
	}
	if page.Next != nil {
		if err := enc.Encode(nextLine{Next: page.Next.String()}); err != nil {
			return fmt.Errorf("write cursor: %w", err)
		}
	}
	return nil
}

func printTenantTable(out output, page docket.TenantPage) {
	tw := tabwriter.NewWriter(out.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCOPE\tCAP\tSOURCE\tADMITTED\tCLAIMED\tREADY\tQUEUED\tDEBT\tUNFINISHED\tEPOCH\tPARKED\tPAUSED")
	for _, i := range page.Tenants {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", i.Scope, i.EffectiveMaxActiveRuns, i.Source,
			i.Admitted, i.AdmittedClaimed, i.AdmittedReady, i.Queued, i.Debt, i.Unfinished, i.AdmissionEpoch, parkedText(i),
			yesNo(i.Paused))
	}
	tw.Flush()
	if page.Next != nil {
		fmt.Fprintf(out.stdout, "next: %s\n", page.Next)
	}
}
