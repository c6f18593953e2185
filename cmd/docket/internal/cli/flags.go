package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
)

// databaseURLEnv names the environment variable read when --database-url is
// absent.
const databaseURLEnv = "DOCKET_DATABASE_URL"

// schemaEnv names the environment variable read when --schema is absent.
const schemaEnv = "DOCKET_SCHEMA"

// errNoDatabaseURL reports that neither the flag nor the environment names a
// database.
var errNoDatabaseURL = errors.New("no database: pass --database-url or set " + databaseURLEnv)

// connectionFlags are the flags every database command accepts.
type connectionFlags struct {
	databaseURL string
	schema      string
}

// newFlagSet returns a silent flag set with the connection flags registered.
func newFlagSet(name string, conn *connectionFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&conn.databaseURL, "database-url", "", "PostgreSQL URL (default $"+databaseURLEnv+")")
	fs.StringVar(&conn.schema, "schema", "", "Docket schema (default $"+schemaEnv+", else the URL's search_path, else public)")
	return fs
}

// url resolves the database URL from the flag or the environment and
// refuses one that cannot be parsed, before any connection is tried.
func (c connectionFlags) url() (string, error) {
	databaseURL := c.databaseURL
	if databaseURL == "" {
		databaseURL = os.Getenv(databaseURLEnv)
	}
	if databaseURL == "" {
		return "", errNoDatabaseURL
	}
	if _, err := pgx.ParseConfig(databaseURL); err != nil {
		return "", fmt.Errorf("invalid database URL: %w", err)
	}
	return databaseURL, nil
}

// domainSchema is the schema of the domain a command works on: --schema,
// else $DOCKET_SCHEMA, else "" (the URL's search_path decides). Commands
// that span every domain read the flag alone.
func (c connectionFlags) domainSchema() string {
	if c.schema != "" {
		return c.schema
	}
	return os.Getenv(schemaEnv)
}

// negativeNumber matches positional integers that the flag package would
// otherwise mistake for flags, so "-1" reaches cap validation.
var negativeNumber = regexp.MustCompile(`^-[0-9]+$`)

// parseInterleaved parses flags that may appear before, between or after
// the positional arguments and returns the positional arguments in order;
// "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		for len(args) > 0 && negativeNumber.MatchString(args[0]) {
			positional = append(positional, args[0])
			args = args[1:]
		}
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			// After "--" everything is positional, even "-acme".
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// parseOperands parses args into fs (flags may follow operands) and returns
// the operands and the names of the flags given.
func parseOperands(fs *flag.FlagSet, args []string) (positional []string, given map[string]bool, err error) {
	positional, err = parseInterleaved(fs, args)
	given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return positional, given, err
}

// parseScope is the one reader of a scope on the command line, for operands
// and flags alike: "tenantless" and "tenant:ID", exactly as Scope.String
// prints them in every list and result, or a bare tenant ID. So a tenant
// whose id is "tenantless" or starts with "tenant:" is addressed as printed,
// "tenant:tenantless" or "tenant:tenant:...".
func parseScope(s string) (docket.Scope, error) {
	if s == docket.Tenantless.String() {
		return docket.Tenantless, nil
	}
	id, printed := strings.CutPrefix(s, "tenant:")
	if !printed {
		id = s
	}
	if id == "" {
		return docket.Scope{}, fmt.Errorf("scope %s: want tenant:ID, tenantless or a tenant id", quoteArg(s))
	}
	return docket.Tenant(id), nil
}

// leadingScope takes the scope an action addresses off operands: the
// tenantless scope with --tenantless, else the first operand read by
// parseScope.
func leadingScope(tenantless bool, operands []string) (docket.Scope, []string, error) {
	switch {
	case tenantless:
		return docket.Tenantless, operands, nil
	case len(operands) == 0:
		return docket.Scope{}, nil, errors.New("missing TENANT (or --tenantless)")
	}
	scope, err := parseScope(operands[0])
	if err != nil {
		return docket.Scope{}, nil, err
	}
	return scope, operands[1:], nil
}
