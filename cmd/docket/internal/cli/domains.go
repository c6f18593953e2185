package cli

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/docket"
)

const domainsUsage = `docket domains list [--database-url URL]
  The Docket domains (queues) of the database, one schema per line in name
  order: each is a fairness domain of its own (ring, cursor, default cap and
  overrides) that every other command addresses with --schema NAME.
`

// runDomains implements "docket domains".
func runDomains(ctx context.Context, args []string, out output) int {
	if len(args) == 0 || args[0] != "list" {
		return out.failf(ExitUsage, "domains: want the action list\n\n%s", domainsUsage)
	}
	var conn connectionFlags
	fs := newFlagSet("domains list", &conn)
	if err := fs.Parse(args[1:]); err != nil {
		return out.usageError("domains list", err, domainsUsage)
	}
	if fs.NArg() > 0 {
		return out.failf(ExitUsage, "domains list: unexpected argument %s\n\n%s", quoteArg(fs.Arg(0)), domainsUsage)
	}
	if conn.schema != "" {
		return out.failf(ExitUsage, "domains list: --schema does not apply: the list covers every schema of the database")
	}
	databaseURL, err := conn.url()
	if err != nil {
		return out.failf(ExitUsage, "domains list: %v", err)
	}
	pool, err := openPool(ctx, databaseURL, "")
	if err != nil {
		return out.failf(ExitFailure, "domains list: %v", err)
	}
	defer pool.Close()
	domains, err := docket.ListDomains(ctx, pool)
	if err != nil {
		return out.failf(ExitFailure, "domains list: %v", err)
	}
	for _, d := range domains {
		fmt.Fprintln(out.stdout, d)
	}
	return ExitOK
}
