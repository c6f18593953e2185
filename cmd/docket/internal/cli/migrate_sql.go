package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docketrun/docket-go/docket"
)

// runMigrateSQL implements "docket migrate sql": Docket's migrations for an
// app that applies them with its own tool. It needs no database.
func runMigrateSQL(args []string, out output) int {
	fs := flag.NewFlagSet("migrate sql", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	version := fs.String("version", "", "one migration's version (default: every migration)")
	up := fs.Bool("up", false, "the up sections (the default)")
	down := fs.Bool("down", false, "the down sections")
	format := fs.String("format", string(docket.FormatPlain), "plain, dbmate, goose or golang-migrate")
	dir := fs.String("out", "", "write the files into this directory instead of printing")
	if err := fs.Parse(args); err != nil {
		return out.usageError("migrate sql", err, migrateUsage)
	}
	if fs.NArg() > 0 {
		return out.failf(ExitUsage, "migrate sql: unexpected argument %s\n\n%s", quoteArg(fs.Arg(0)), migrateUsage)
	}
	if *up && *down {
		return out.failf(ExitUsage, "migrate sql: --up and --down exclude each other")
	}
	migrator, err := docket.NewMigrator(nil, docket.MigratorConfig{})
	if err != nil {
		return out.failf(ExitFailure, "migrate sql: %v", err)
	}
	files, err := migrator.Files(docket.MigrationFormat(*format))
	if err != nil {
		return out.failf(ExitUsage, "migrate sql: %v", err)
	}
	if *version != "" {
		files = slices.DeleteFunc(files, func(f docket.MigrationFile) bool { return f.Version != *version })
		if len(files) == 0 {
			return out.failf(ExitUsage, "migrate sql: %v: %s", docket.ErrUnknownMigration, quoteArg(*version))
		}
	}
	if *dir != "" {
		return writeMigrationFiles(*dir, files, out)
	}
	switch docket.MigrationFormat(*format) {
	case docket.FormatPlain, docket.FormatGolangMigrate:
		suffix := ".up.sql"
		if *down {
			suffix = ".down.sql"
			slices.Reverse(files)
		}
		for _, f := range files {
			if strings.HasSuffix(f.Name, suffix) {
				fmt.Fprintf(out.stdout, "-- Docket migration %s\n%s\n", f.Name, f.SQL)
			}
		}
	default:
		if len(files) != 1 {
			return out.failf(ExitUsage, "migrate sql: the %s format is one file per migration: pass --version or --out", *format)
		}
		if *up || *down {
			return out.failf(ExitUsage, "migrate sql: a %s file holds both sections; --up and --down apply to plain and golang-migrate", *format)
		}
		fmt.Fprint(out.stdout, files[0].SQL)
	}
	return ExitOK
}

// writeMigrationFiles writes files into dir, creating it, and names each
// file written; an existing file of the same name is an error, nothing is
// overwritten.
func writeMigrationFiles(dir string, files []docket.MigrationFile, out output) int {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return out.failf(ExitFailure, "migrate sql: %v", err)
	}
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			return out.failf(ExitFailure, "migrate sql: %s exists; nothing is overwritten", path)
		}
		if err != nil {
			return out.failf(ExitFailure, "migrate sql: %v", err)
		}
		_, werr := file.WriteString(f.SQL)
		if cerr := file.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return out.failf(ExitFailure, "migrate sql: writing %s: %v", path, werr)
		}
		fmt.Fprintf(out.stdout, "wrote %s\n", path)
	}
	return ExitOK
}
