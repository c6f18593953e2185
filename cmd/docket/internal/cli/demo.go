package cli

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/docketrun/docket-go/cmd/docket/internal/demo"
)

const demoUsage = `docket demo [--database-url URL] [--hot-runs N] [--light-tenants N]
            [--light-runs N] [--concurrency N] [--cap N] [--handler-time D] [--keep]
  Insert one hot tenant's backlog, then many light tenants' runs, and drain
  the same backlog with a Worker under Legacy and then under TenantFair;
  print progress and each engine's waits per cohort. Without --database-url
  ($DOCKET_DATABASE_URL is not read) it runs on a throwaway local PostgreSQL
  that it removes afterwards; with one, it works in two fresh schemas that it
  drops afterwards. Defaults: 2000 hot runs, 20 light tenants x 10 runs,
  concurrency 8, cap 4, handler time 2ms. --keep keeps both schemas and
  prints the database URL and the "docket console" command for each; on the
  throwaway server it then waits for Ctrl-C before removing the server.
`

// runDemo implements "docket demo".
func runDemo(ctx context.Context, args []string, out output) int {
	opts := demo.DefaultOptions()
	opts.Out = out.stdout
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&opts.DatabaseURL, "database-url", "", "PostgreSQL URL (default: a throwaway local server)")
	fs.IntVar(&opts.HotRuns, "hot-runs", opts.HotRuns, "runs of the hot tenant")
	fs.IntVar(&opts.LightTenants, "light-tenants", opts.LightTenants, "number of light tenants")
	fs.IntVar(&opts.LightRuns, "light-runs", opts.LightRuns, "runs per light tenant")
	fs.IntVar(&opts.Concurrency, "concurrency", opts.Concurrency, "worker concurrency")
	fs.IntVar(&opts.Cap, "cap", opts.Cap, "TenantFair default cap")
	fs.DurationVar(&opts.HandlerTime, "handler-time", opts.HandlerTime, "handler work per run")
	fs.BoolVar(&opts.Keep, "keep", false, "keep the schemas (and the local server until Ctrl-C) for the console")
	if err := fs.Parse(args); err != nil {
		return out.usageError("demo", err, demoUsage)
	}
	if fs.NArg() > 0 {
		return out.failf(ExitUsage, "demo: unexpected argument %s\n\n%s", quoteArg(fs.Arg(0)), demoUsage)
	}
	if err := demo.Run(ctx, opts); err != nil {
		if errors.Is(err, demo.ErrInvalidOptions) {
			return out.failf(ExitUsage, "demo: %v\n\n%s", err, demoUsage)
		}
		return out.failf(ExitFailure, "demo: %v", err)
	}
	return ExitOK
}
