package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

const policyUsage = `docket policy <action> [--database-url URL] [--schema NAME]
  get                     the persisted default cap, its version and the engine
  set-default N           change the persisted default cap at runtime
  set-park-dormant on|off turn parked partitions on or off for the domain
  pause-domain            stop every claim of the domain (a queue-wide pause):
                          nothing is admitted or leased, claimed runs finish
  resume-domain           let claims admit and lease again
  set-override TENANT N   give one scope its own cap
  reset-override TENANT   make one scope inherit the default again
  inspect TENANT          effective cap and rate, versions, tokens left and
                          admission counts of a scope
  set-rate RATE           the domain's default admission rate: N/PERIOD
                          (at most N promotions per PERIOD, e.g. 50/1s) or
                          none
  set-tenant-rate TENANT RATE
                          one scope's own rate: N/PERIOD, or exempt (no rate
                          whatever the default)
  reset-tenant-rate TENANT
                          make one scope inherit the default rate again
  --burst B               with a rate: B more promotions at once after a quiet
                          spell (default 0); at most N + B in any PERIOD
  --expected-version V    on writes: apply only at version V (else exit 3)
  TENANT                  a tenant id, or a scope as a list prints it:
                          tenant:ID or tenantless
  --tenantless            address the tenantless scope instead of a TENANT
  Caps are integers in 1..2147483647. A rate's N is 1..1000000, its PERIOD
  1ms..168h (a Go duration) and B 0..1000000. These commands never start an engine
  and never synchronize the policy from configuration.
`

// policyArgs are the parsed arguments of one policy action.
type policyArgs struct {
	conn            connectionFlags
	tenantless      bool
	expectedVersion *int64
	positional      []string
	scope           docket.Scope
	capValue        int
	parkDormant     bool
	burst           int
	rate            docket.RateLimit
}

// policyAction is one "docket policy" action: whether it names a scope,
// takes a cap and writes, and how it runs against an Admin.
type policyAction struct {
	scoped     bool
	takeCap    bool
	takeSwitch bool
	// takeRate is the rate operand: a default rate (N/PERIOD or none) or
	// a tenant's (N/PERIOD or exempt, both read as the zero rate).
	takeRate string
	writes   bool
	run      func(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error
}

var policyActions = map[string]policyAction{
	"get":               {run: policyGet},
	"set-default":       {takeCap: true, writes: true, run: policySetDefault},
	"set-park-dormant":  {takeSwitch: true, writes: true, run: policySetParkDormant},
	"set-override":      {scoped: true, takeCap: true, writes: true, run: policySetOverride},
	"reset-override":    {scoped: true, writes: true, run: policyResetOverride},
	"inspect":           {scoped: true, run: policyInspect},
	"set-rate":          {takeRate: "none", writes: true, run: policySetRate},
	"pause-domain":      {writes: true, run: policyPauseDomain},
	"resume-domain":     {writes: true, run: policyResumeDomain},
	"set-tenant-rate":   {scoped: true, takeRate: "exempt", writes: true, run: policySetTenantRate},
	"reset-tenant-rate": {scoped: true, writes: true, run: policyResetTenantRate},
}

// notInitializedHint says how an uninitialized policy gets its default cap.
const notInitializedHint = "The default cap is persisted by the first start of a TenantFair client (docket.Open with\n" +
	"policy.TenantFair{DefaultMaxActiveRuns: N}); start the application once, then change it here."

// runPolicy implements "docket policy".
func runPolicy(ctx context.Context, args []string, out output) int {
	if len(args) == 0 {
		return out.failf(ExitUsage, "policy: missing action\n\n%s", policyUsage)
	}
	action, ok := policyActions[args[0]]
	if !ok {
		return out.failf(ExitUsage, "policy: unknown action %s\n\n%s", quoteArg(args[0]), policyUsage)
	}
	a, err := parsePolicyArgs(args[1:])
	if err != nil {
		return out.usageError("policy "+args[0], err, policyUsage)
	}
	if err := action.check(&a); err != nil {
		return out.failf(ExitUsage, "policy %s: %v\n\n%s", args[0], err, policyUsage)
	}
	return withAdmin(ctx, a.conn, "policy "+args[0], out, policyExitCode, func(admin *docket.Admin) error {
		return action.run(ctx, admin, a, out)
	})
}

func parsePolicyArgs(args []string) (policyArgs, error) {
	var a policyArgs
	fs := newFlagSet("policy", &a.conn)
	fs.BoolVar(&a.tenantless, "tenantless", false, "address the tenantless scope")
	fs.IntVar(&a.burst, "burst", 0, "promotions beyond one at once after a quiet spell")
	fs.Func("expected-version", "compare-and-set version", func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %s", quoteArg(s))
		}
		a.expectedVersion = &v
		return nil
	})
	positional, err := parseInterleaved(fs, args)
	a.positional = positional
	return a, err
}

// check validates the arguments of an action before any database access
// and resolves its scope and cap.
func (p policyAction) check(a *policyArgs) error {
	if a.expectedVersion != nil && !p.writes {
		return errors.New("--expected-version applies to writes only")
	}
	if a.tenantless && !p.scoped {
		return errors.New("--tenantless applies to scoped actions only")
	}
	operands := a.positional
	if p.scoped {
		var err error
		if a.scope, operands, err = leadingScope(a.tenantless, operands); err != nil {
			return err
		}
	}
	if a.burst != 0 && p.takeRate == "" {
		return errors.New("--burst applies to set-rate and set-tenant-rate only")
	}
	want := 0
	if p.takeCap || p.takeSwitch || p.takeRate != "" {
		want = 1
	}
	if len(operands) != want {
		return fmt.Errorf("want %d argument(s) after the scope, got %d", want, len(operands))
	}
	if p.takeCap {
		capValue, err := parseCap(operands[0])
		if err != nil {
			return err
		}
		a.capValue = capValue
	}
	if p.takeRate != "" {
		rate, err := parseRate(operands[0], p.takeRate, a.burst)
		if err != nil {
			return err
		}
		a.rate = rate
	}
	if p.takeSwitch {
		switch operands[0] {
		case "on":
			a.parkDormant = true
		case "off":
			a.parkDormant = false
		default:
			return fmt.Errorf("want on or off, got %s", quoteArg(operands[0]))
		}
	}
	return nil
}

// parseCap reads a cap operand in 1..docket.MaxCap.
func parseCap(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 || v > docket.MaxCap {
		return 0, fmt.Errorf("%w: got %s", docket.ErrInvalidCap, quoteArg(s))
	}
	return v, nil
}

// parseRate reads a rate operand: N/PERIOD with burst, or the word none
// (resp. exempt) for the zero rate. The bounds are RateLimit's, checked by
// the write (ErrInvalidRate).
func parseRate(s, zeroWord string, burst int) (docket.RateLimit, error) {
	if s == zeroWord {
		if burst != 0 {
			return docket.RateLimit{}, fmt.Errorf("%w: --burst with %s", docket.ErrInvalidRate, zeroWord)
		}
		return docket.RateLimit{}, nil
	}
	n, period, ok := strings.Cut(s, "/")
	limit, err := strconv.Atoi(n)
	if !ok || err != nil {
		return docket.RateLimit{}, fmt.Errorf("%w: want N/PERIOD (e.g. 50/1s) or %s, got %s", docket.ErrInvalidRate, zeroWord, quoteArg(s))
	}
	d, err := time.ParseDuration(period)
	if err != nil {
		return docket.RateLimit{}, fmt.Errorf("%w: period of %s: %s", docket.ErrInvalidRate, quoteArg(s), clipMessage(err.Error()))
	}
	rate := docket.RateLimit{Limit: limit, Period: d, Burst: burst}
	if rate.IsZero() {
		return docket.RateLimit{}, fmt.Errorf("%w: %s", docket.ErrInvalidRate, quoteArg(s))
	}
	return rate, nil
}

// openPool connects to databaseURL, resolving unqualified names in schema
// when it is set.
func openPool(ctx context.Context, databaseURL, schema string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = schema
	}
	cfg.MaxConns = 2
	return pgxpool.NewWithConfig(ctx, cfg)
}

// policyExitCode maps refusals to exit codes; nothing was written for any of
// them.
func policyExitCode(err error) int {
	switch {
	case errors.Is(err, docket.ErrStale):
		return ExitStale
	case errors.Is(err, docket.ErrInvalidCap), errors.Is(err, docket.ErrInvalidRate), errors.Is(err, docket.ErrInvalidArgument),
		errors.Is(err, docket.ErrTenantRequired):
		return ExitUsage
	}
	return ExitFailure
}

func writeOptions(a policyArgs) docket.ClaimPolicyWriteOptions {
	return docket.ClaimPolicyWriteOptions{ExpectedVersion: a.expectedVersion}
}

func policyGet(ctx context.Context, admin *docket.Admin, _ policyArgs, out output) error {
	d, err := admin.FetchClaimPolicyDefault(ctx)
	if err != nil {
		return err
	}
	printDefault(out, d)
	return nil
}

func policySetDefault(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	d, err := admin.PutClaimPolicyDefault(ctx, a.capValue, writeOptions(a))
	if err != nil {
		return err
	}
	printDefault(out, d)
	return nil
}

func policySetParkDormant(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	d, err := admin.PutClaimPolicyParking(ctx, a.parkDormant, writeOptions(a))
	if err != nil {
		return err
	}
	printDefault(out, d)
	return nil
}

func policySetOverride(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	o, err := admin.PutClaimPolicyOverride(ctx, a.scope, a.capValue, writeOptions(a))
	if err != nil {
		return err
	}
	printOverride(out, o)
	return nil
}

func policyResetOverride(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	o, err := admin.ResetClaimPolicyOverride(ctx, a.scope, writeOptions(a))
	if err != nil {
		return err
	}
	printOverride(out, o)
	return nil
}

func policyInspect(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	i, err := admin.InspectClaimPolicy(ctx, a.scope)
	if err != nil {
		return err
	}
	printInspection(out, i)
	return nil
}

func policySetRate(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	d, err := admin.PutClaimPolicyRate(ctx, a.rate, writeOptions(a))
	if err != nil {
		return err
	}
	printDefault(out, d)
	return nil
}

func policySetTenantRate(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	r, err := admin.PutTenantRate(ctx, a.scope, a.rate, writeOptions(a))
	if err != nil {
		return err
	}
	printTenantRate(out, r)
	return nil
}

func policyResetTenantRate(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	r, err := admin.ResetTenantRate(ctx, a.scope, writeOptions(a))
	if err != nil {
		return err
	}
	printTenantRate(out, r)
	return nil
}

func policyPauseDomain(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	d, err := admin.PauseDomain(ctx, writeOptions(a))
	if err != nil {
		return err
	}
	printDefault(out, d)
	return nil
}

func policyResumeDomain(ctx context.Context, admin *docket.Admin, a policyArgs, out output) error {
	d, err := admin.ResumeDomain(ctx, writeOptions(a))
	if err != nil {
		return err
	}
	printDefault(out, d)
	return nil
}
