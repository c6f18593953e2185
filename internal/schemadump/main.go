// Command schemadump writes db/schema.sql, the current schema in one file:
// it migrates a fresh database of a throwaway local cluster with every
// embedded migration, dumps the schema with pg_dump and keeps the
// statements, without the dump's session settings and version banner. It is
// the file a reviewer reads and the file an app's sqlc reads (the convention
// of dbmate's schema.sql).
//
// With -check it writes nothing and fails when db/schema.sql differs from a
// fresh dump.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pglocal"
)

// database is the database of the throwaway cluster the dump is taken from.
const database = "docket_schema"

func main() {
	out := flag.String("out", "db/schema.sql", "the current-schema file")
	check := flag.Bool("check", false, "fail instead of writing when the file is stale")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := run(ctx, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "schemadump:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out string, check bool) error {
	fmt.Fprintln(os.Stderr, "schemadump: starting a throwaway PostgreSQL to dump the migrated schema")
	srv, err := pglocal.Start(ctx, pglocal.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop(context.WithoutCancel(ctx)) }()
	dump, err := dumpMigrated(ctx, srv)
	if err != nil {
		return err
	}
	current, err := os.ReadFile(out)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if bytes.Equal(current, dump) {
		return nil
	}
	if check {
		return fmt.Errorf("%s is stale: run make generate", out)
	}
	if err := os.WriteFile(out, dump, 0o644); err != nil {
		return err
	}
	fmt.Printf("updated %s\n", out)
	return nil
}

// dumpMigrated creates a database, migrates its public schema to the newest
// embedded version and returns the normalized schema-only dump.
func dumpMigrated(ctx context.Context, srv *pglocal.Server) ([]byte, error) {
	admin, err := pgx.Connect(ctx, srv.URL("postgres"))
	if err != nil {
		return nil, err
	}
	_, err = admin.Exec(ctx, "create database "+database)
	admin.Close(ctx)
	if err != nil {
		return nil, fmt.Errorf("creating the database: %w", err)
	}
	migrator, err := docket.NewMigratorURL(srv.URL(database), docket.MigratorConfig{Schema: "public"})
	if err != nil {
		return nil, err
	}
	if err := migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		return nil, fmt.Errorf("migrating: %w", err)
	}
	version, err := docket.SchemaVersion()
	if err != nil {
		return nil, err
	}
	pgDump, err := pgDumpPath(srv)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, pgDump, "--schema-only", "--no-owner", "--no-privileges",
		"--schema=public", "--exclude-table=public.docket_schema_migrations", srv.URL(database))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("pg_dump: %w\n%s", err, stderr.String())
	}
	return normalize(raw, version), nil
}

// pgDumpPath finds the pg_dump of the server's own binaries, else on PATH.
func pgDumpPath(srv *pglocal.Server) (string, error) {
	beside := filepath.Join(srv.BinDir(), "pg_dump")
	if _, err := os.Stat(beside); err == nil {
		return beside, nil
	}
	path, err := exec.LookPath("pg_dump")
	if err != nil {
		return "", fmt.Errorf("pg_dump is neither beside the server binaries nor on PATH: %w", err)
	}
	return path, nil
}

// normalize keeps the dump's objects with their "Name: ...; Type: ..."
// headers: it drops the version banner, the session settings and psql's
// restrict meta-commands, which vary with the pg_dump version and say
// nothing about the schema, and the public schema's own entries, which every
// database has.
func normalize(raw []byte, version string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "-- Docket's schema as migration %s leaves it, dumped by make generate\n", version)
	b.WriteString("-- from a freshly migrated database (public schema). Generated: do not edit;\n")
	b.WriteString("-- change the migrations in db/schema and the sources in db/functions.\n")
	for _, entry := range strings.Split(string(raw), "\n--\n-- Name: ")[1:] {
		header, body, _ := strings.Cut(entry, "\n--\n")
		if strings.Contains(header, "; Type: SCHEMA;") || strings.HasPrefix(header, "SCHEMA public;") {
			continue
		}
		var kept []string
		for _, line := range strings.Split(body, "\n") {
			if strings.HasPrefix(line, "SET ") || strings.HasPrefix(line, "SELECT pg_catalog.set_config(") ||
				strings.HasPrefix(line, `\restrict`) || strings.HasPrefix(line, `\unrestrict`) ||
				strings.HasPrefix(line, "-- PostgreSQL database dump") || line == "--" {
				continue
			}
			kept = append(kept, line)
		}
		fmt.Fprintf(&b, "\n-- Name: %s\n\n%s\n", header, strings.TrimSpace(strings.Join(kept, "\n")))
	}
	return []byte(b.String())
}
