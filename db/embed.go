// Package db embeds the reviewed SQL of Docket: the dbmate migrations that
// docket.Migrator applies and the function sources they include. The SQL files
// themselves are the source of truth.
package db

import "embed"

// Migrations holds db/schema/*.sql, the dbmate migrations in version order.
//
//go:embed schema/*.sql
var Migrations embed.FS

// MigrationsDir is the directory of Migrations that holds the migrations.
const MigrationsDir = "schema"

// Functions holds db/functions, one plpgsql object per source, each
// versioned by its suffix (_v1, _v2, ...): a file NAME_vN.sql, or a directory
// NAME_vN/ of step files that ReadFunctionSource splices.
//
//go:embed functions/*.sql functions/*/*.sql
var Functions embed.FS

// FunctionsDir is the directory of Functions that holds the sources.
const FunctionsDir = "functions"

// LedgerDDL creates Docket's version ledger, docket_schema_migrations, when
// it does not exist yet.
//
//go:embed sqlc/docket_schema_migrations.sql
var LedgerDDL string
