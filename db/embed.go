// Package db embeds the reviewed SQL of Docket: the dbmate migrations that
// docket.Migrate applies. The SQL files themselves are the source of truth.
package db

import "embed"

// Migrations holds db/schema/*.sql, the dbmate migrations in version order.
//
//go:embed schema/*.sql
var Migrations embed.FS

// MigrationsDir is the directory of Migrations that holds the migrations.
const MigrationsDir = "schema"
