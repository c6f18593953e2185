// Package cli is the docket command line: schema migrations, claim-policy
// administration, run and tenant listings, run maintenance (signals,
// retry, retention), schedules of periodic runs and the operator console's
// server. cmd/docket is a
// thin wrapper around Run, so tests drive the same code in-process.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Exit codes of the docket command.
const (
	// ExitOK reports success.
	ExitOK = 0
	// ExitFailure reports a runtime or database error.
	ExitFailure = 1
	// ExitUsage reports a usage error or invalid input; nothing was written.
	ExitUsage = 2
	// ExitStale reports a compare-and-set write whose expected version no
	// longer matches; nothing was written.
	ExitStale = 3
)

// command is one subcommand. Adding a subcommand means adding its file and
// one entry to commands.
type command struct {
	name    string
	usage   string
	summary string
	run     func(ctx context.Context, args []string, out output) int
	// actionUsage holds the usage of actions that have their own; "--help"
	// after such an action prints only it.
	actionUsage map[string]string
}

// commands is the dispatch table, in help order.
var commands = []command{
	{name: "migrate", usage: migrateUsage, summary: "apply, roll back, list or adopt schema migrations", run: runMigrate},
	{name: "policy", usage: policyUsage, summary: "read and change the TenantFair claim policy", run: runPolicy},
	{name: "runs", usage: runsUsage, summary: "list, show, signal, retry or prune runs", run: runRuns, actionUsage: runsActionUsage},
	{name: "tenants", usage: tenantsUsage, summary: "list the domain's partitions, show, pause or resume one scope", run: runTenants, actionUsage: tenantsActionUsage},
	{name: "schedules", usage: schedulesUsage, summary: "list, add, pause, resume or remove schedules of periodic runs", run: runSchedules, actionUsage: schedulesActionUsage},
	{name: "domains", usage: domainsUsage, summary: "list the database's domains (queues), one schema each", run: runDomains},
	{name: "console", usage: consoleUsage, summary: "serve the operator console (HTML) of one fairness domain", run: runConsole},
	{name: "demo", usage: demoUsage, summary: "drain a hot-tenant backlog under Legacy and TenantFair and compare waits", run: runDemo},
	{name: "version", usage: versionUsage, summary: "print the build's version, revision and schema version", run: runVersion},
}

// output carries the command's streams.
type output struct {
	stdout io.Writer
	stderr io.Writer
}

// failf reports an error on stderr and returns code. The message starts
// with "docket: " once: the library's own "docket: " prefix inside wrapped
// errors is dropped.
func (o output) failf(code int, format string, args ...any) int {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), ": docket: ", ": ")
	fmt.Fprintf(o.stderr, "docket: %s\n", msg)
	return code
}

// isHelp reports a help request word.
func isHelp(arg string) bool {
	return arg == "help" || isHelpFlag(arg)
}

// isHelpFlag reports a help flag.
func isHelpFlag(arg string) bool {
	return slices.Contains([]string{"-h", "-help", "--help"}, arg)
}

// asksHelp reports a help flag among a command's arguments before "--",
// after which everything is positional (a tenant may be called "-h").
func asksHelp(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if isHelpFlag(a) {
			return true
		}
	}
	return false
}

// usageError reports a flag parsing error; -h and --help print the usage
// on stdout instead and succeed.
func (o output) usageError(name string, err error, usage string) int {
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(o.stdout, usage)
		return ExitOK
	}
	return o.failf(ExitUsage, "%s: %s\n\n%s", name, clipMessage(err.Error()), usage)
}

// Run executes the docket command line args (without the program name),
// writing results to stdout and diagnostics to stderr, and returns the exit
// code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := output{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		writeHelp(stderr)
		return ExitUsage
	}
	if isHelp(args[0]) {
		if len(args) > 1 {
			return commandHelp(args[1], out)
		}
		writeHelp(stdout)
		return ExitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			// "docket CMD --help" (and "docket CMD ACTION --help") print
			// only that command's usage.
			if asksHelp(args[1:]) {
				fmt.Fprint(stdout, c.helpFor(args[1:]))
				return ExitOK
			}
			return c.run(ctx, args[1:], out)
		}
	}
	return out.failf(ExitUsage, "unknown command %s (docket help lists the commands)", quoteArg(args[0]))
}

// helpFor returns the usage of the action args name when it has its own,
// else the command's.
func (c command) helpFor(args []string) string {
	if len(args) > 0 {
		if usage, ok := c.actionUsage[args[0]]; ok {
			return usage
		}
	}
	return c.usage
}

// commandHelp prints the usage of the named command ("docket help CMD").
func commandHelp(name string, out output) int {
	for _, c := range commands {
		if c.name == name {
			fmt.Fprint(out.stdout, c.usage)
			return ExitOK
		}
	}
	return out.failf(ExitUsage, "help: unknown command %s (docket help lists the commands)", quoteArg(name))
}

// writeHelp prints every command's usage and the exit codes.
func writeHelp(w io.Writer) {
	fmt.Fprintln(w, "Usage: docket <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	for _, c := range commands {
		fmt.Fprintln(w)
		fmt.Fprint(w, c.usage)
	}
	fmt.Fprint(w, `
Scopes:
  TENANT, --tenant and --after SCOPE take a scope as every list and result
  prints it, tenant:ID or tenantless, or a bare tenant ID (so a tenant whose
  id is "tenantless" or starts with "tenant:" is written tenant:ID).

Connection:
  --database-url URL   PostgreSQL URL; defaults to $DOCKET_DATABASE_URL
  --schema NAME        Docket schema (fairness domain); defaults to
                       $DOCKET_SCHEMA, else the URL's search_path, else public

Exit codes:
  0  success
  1  runtime or database error
  2  usage error or invalid input (nothing written)
  3  stale version: --expected-version no longer matches (nothing written)
`)
}
