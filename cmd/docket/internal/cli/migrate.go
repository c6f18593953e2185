package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/docketrun/docket-go/docket"
)

const migrateUsage = `docket migrate up|down|status|adopt [--database-url URL] [--schema NAME] [--create]
docket migrate sql [--version V] [--up|--down] [--format plain|dbmate|goose|golang-migrate] [--out DIR]
  up      apply every pending migration and say what was applied, or that
          nothing was pending; a schema where no Docket migration is applied
          (or that does not exist) is refused (exit 2, nothing changed)
          unless --create is given: the first install of a domain is
          "up --create", so a mistyped --schema never becomes a new domain
  down    roll back the newest applied migration, one at a time
  status  list the migrations and whether each is applied, or is there but
          applied outside Docket's ledger (by goose, psql, ...); a schema
          where no Docket migration is applied exits 1 (so does down)
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
	create := fs.Bool("create", false, "up: install Docket in a schema that holds no Docket tables (a new domain)")
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
		return out.failf(ExitUsage, "migrate: unknown action %s\n\n%s", quoteArg(positional[0]), migrateUsage)
	}
	if *create && positional[0] != "up" {
		return out.failf(ExitUsage, "migrate %s: --create applies to migrate up only\n\n%s", positional[0], migrateUsage)
	}
	// Only "up --create" may make a schema a new domain.
	opts := docket.MigrateOptions{RequireInstalled: !*create}
	migrator, err := docket.NewMigratorURL(databaseURL, docket.MigratorConfig{Schema: conn.domainSchema(), Log: out.stdout})
	if err == nil {
		if positional[0] == "status" {
			err = printMigrateStatus(ctx, migrator, opts, conn.domainSchema(), out)
		} else {
			err = migrator.Migrate(ctx, direction, opts)
		}
	}
	if err != nil {
		return out.failf(migrateExitCode(positional[0], err), "migrate %s: %v%s", positional[0], err, notInstalledHint(positional[0], conn.domainSchema(), err))
	}
	return ExitOK
}

// notInstalledHint says, after an ErrNotInstalled refusal of action, how
// to install Docket in the schema when that is what was meant.
func notInstalledHint(action, schemaFlag string, err error) string {
	if !errors.Is(err, docket.ErrNotInstalled) {
		return ""
	}
	install := "docket migrate up --create"
	if schemaFlag != "" {
		install += " --schema " + schemaFlag
	}
	switch action {
	case "up":
		return "; nothing was changed: pass --create to install Docket there as a new domain (`" + install + "`), or check --schema and $" + schemaEnv
	case "down":
		return "; nothing to roll back"
	}
	return "; `" + install + "` installs Docket there"
}

// printMigrateStatus lists each migration as "applied", "pending" or
// "outside" (applied outside Docket's ledger), and then says what an
// outside schema's shape matches and how to adopt it.
func printMigrateStatus(ctx context.Context, migrator *docket.Migrator, opts docket.MigrateOptions, schemaFlag string, out output) error {
	statuses, err := migrator.Status(ctx, opts)
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

// migrateExitCode separates refused input from runtime failures: an
// invalid schema name, and "up" without --create on a schema that holds no
// Docket tables, are usage errors.
func migrateExitCode(action string, err error) int {
	if errors.Is(err, docket.ErrInvalidSchemaName) || (action == "up" && errors.Is(err, docket.ErrNotInstalled)) {
		return ExitUsage
	}
	return ExitFailure
}
