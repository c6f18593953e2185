package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docketrun/docket-go/docket"
)

const migrateUsage = `docket migrate up|down|status|adopt [--database-url URL] [--schema NAME]
docket migrate sql [--version V] [--up|--down] [--format plain|dbmate|goose|golang-migrate] [--out DIR]
  up      apply every pending migration (a fresh install gets all of them) and
          say what was applied, or that nothing was pending
  down    roll back the newest applied migration, one at a time
  status  list the migrations and whether each is applied, or is there but
          applied outside Docket's ledger (by goose, psql, ...)
  adopt   record in Docket's ledger the migrations another tool applied: only
          when the schema keeps no ledger and its shape matches a version
  sql     print Docket's migrations for another migration tool (no database):
          with --out, write every migration (or --version's) as that tool's
          files into DIR; without, print the --up (default) or --down SQL of
          --version, or of every migration in order, to stdout (plain and
          golang-migrate), or --version's file (dbmate and goose)
`

// runMigrate implements "docket migrate".
func runMigrate(ctx context.Context, args []string, out output) int {
	if len(args) > 0 && args[0] == "sql" {
		return runMigrateSQL(args[1:], out)
	}
	var conn connectionFlags
	fs := newFlagSet("migrate", &conn)
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return out.usageError("migrate", err, migrateUsage)
	}
	if len(positional) != 1 {
		return out.failf(ExitUsage, "migrate: want exactly one of up, down, status, adopt\n\n%s", migrateUsage)
	}
	databaseURL, err := conn.url()
	if err != nil {
		return out.failf(ExitUsage, "migrate: %v", err)
	}
	var direction docket.MigrateDirection
	switch positional[0] {
	case "up":
		direction = docket.MigrateUp
	case "down":
		direction = docket.MigrateDown
	case "status":
		// Status reads; no direction.
	case "adopt":
		direction = docket.MigrateAdopt
	default:
		return out.failf(ExitUsage, "migrate: unknown action %q\n\n%s", positional[0], migrateUsage)
	}
	migrator, err := docket.NewMigratorURL(databaseURL, docket.MigratorConfig{Schema: conn.domainSchema(), Log: out.stdout})
	if err == nil {
		if positional[0] == "status" {
			err = printMigrateStatus(ctx, migrator, conn.domainSchema(), out)
		} else {
			err = migrator.Migrate(ctx, direction, docket.MigrateOptions{})
		}
	}
	if err != nil {
		return out.failf(migrateExitCode(err), "migrate %s: %v", positional[0], err)
	}
	return ExitOK
}

// printMigrateStatus lists each migration as "applied", "pending" or
// "outside" (applied outside Docket's ledger), and then says what an
// outside schema's shape matches and how to adopt it.
func printMigrateStatus(ctx context.Context, migrator *docket.Migrator, schemaFlag string, out output) error {
	statuses, err := migrator.Status(ctx, docket.MigrateOptions{})
	if err != nil {
		return err
	}
	first, matched := "", ""
	for _, s := range statuses {
		state := "pending"
		switch {
		case s.Applied:
			state = "applied"
		case s.OutsideLedger:
			state = "outside"
			if first == "" {
				first = versionLabel(s.Name)
			}
			matched = versionLabel(s.Name)
		}
		fmt.Fprintf(out.stdout, "%-8s %s\n", state, s.Name)
	}
	if matched != "" {
		adopt := "docket migrate adopt"
		if schemaFlag != "" {
			adopt += " --schema " + schemaFlag
		}
		span := first
		if first != matched {
			span += ".." + matched
		}
		fmt.Fprintf(out.stdout, "applied outside Docket's ledger, shape matches %s: `%s` records %s in docket_schema_migrations\n", matched, adopt, span)
	}
	return nil
}

// versionLabel is a migration's short name, "V7" for
// "20261201000007_docket_v7.sql".
func versionLabel(name string) string {
	base := strings.TrimSuffix(name, ".sql")
	return strings.ToUpper(base[strings.LastIndexByte(base, '_')+1:])
}

// migrateExitCode separates refused input from runtime failures.
func migrateExitCode(err error) int {
	if errors.Is(err, docket.ErrInvalidSchemaName) {
		return ExitUsage
	}
	return ExitFailure
}
