package docket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// MigrateDirection selects what Migrate does.
type MigrateDirection int

const (
	// MigrateUp applies every pending migration (a fresh install gets every version).
	MigrateUp MigrateDirection = iota
	// MigrateDown rolls back the newest applied migration: one version per call.
	MigrateDown
	// MigrateAdopt records, in Docket's ledger, the migrations of a schema
	// that another tool (goose, psql, ...) applied: only when the schema
	// keeps no Docket ledger and its Docket objects have exactly the shape
	// one embedded version creates, and then every version up to that one,
	// in one transaction under the migration lock. It changes no other
	// object. A schema whose shape matches no version (up to Target, when
	// set) is refused with an *OutsideLedgerError matching
	// ErrSchemaMismatch, one that already keeps a ledger with
	// ErrLedgerExists, one without docket_runs with ErrSchemaMismatch;
	// each refusal changes nothing.
	MigrateAdopt
)

// MigrateOptions configures Migrate and its variants.
type MigrateOptions struct {
	// Schema is the schema (the "prefix") to install into; Migrate creates
	// it when it does not exist. Empty means the first schema of the
	// connection's search_path parameter, else "public".
	Schema string
	// Direction is MigrateUp (default), MigrateDown or MigrateAdopt.
	Direction MigrateDirection
	// Log receives one line per migration applied or rolled back, or one
	// line saying nothing was pending; nil discards them.
	Log io.Writer
	// Target, when set, is the version of the newest migration to consider
	// (e.g. "20261101000001" for V1 only): MigrateUp stops there and
	// MigrateStatus lists no later migration. Empty means every migration.
	Target string
}

// MigrationStatus is one migration and whether it is applied.
type MigrationStatus struct {
	// Name is the migration file name.
	Name string
	// Applied reports whether the migration is recorded in the schema.
	Applied bool
	// OutsideLedger reports a migration the schema holds although no
	// Docket ledger records it: no docket_schema_migrations records a
	// version, and the schema's Docket objects have exactly the shape of
	// this migration's version or a later one (another tool applied the
	// files). Applied is false; Migrate with MigrateAdopt records it.
	OutsideLedger bool
}

// ErrInvalidSchemaName reports a schema name Migrate refuses to use.
var ErrInvalidSchemaName = errors.New("docket: invalid schema name")

// schemaNamePattern keeps schema names to plain identifiers: a search_path
// lists schemas separated by commas and the name lands in DDL.
var schemaNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Migrate connects with pgx to databaseURL (a URL or a keyword/value DSN,
// anything pgx.ParseConfig accepts) and applies, rolls back one of, or
// adopts (MigrateAdopt) Docket's migrations in the schema named by
// opts.Schema or by the connection's search_path. Each migration runs in its
// own transaction, so a failed upgrade leaves the previous version intact.
// A schema that holds Docket's objects but keeps no Docket ledger (another
// tool applied the files) is refused by MigrateUp and MigrateDown with an
// *OutsideLedgerError, changing nothing: MigrateAdopt records it first.
func Migrate(ctx context.Context, databaseURL string, opts MigrateOptions) error {
	if err := validateMigrateDirection(opts); err != nil {
		return err
	}
	return withMigrationConn(ctx, databaseURL, opts, func(conn *pgx.Conn, schema string) error {
		return migrate(ctx, conn, schema, opts)
	})
}

// MigrateWithPool is Migrate over the application's own pool: each
// migration runs in its own transaction on one of the pool's connections.
func MigrateWithPool(ctx context.Context, pool *pgxpool.Pool, opts MigrateOptions) error {
	if pool == nil {
		return invalidArgument("nil pool")
	}
	if err := validateMigrateDirection(opts); err != nil {
		return err
	}
	schema, err := migrationSchema(opts, pool.Config().ConnConfig.RuntimeParams)
	if err != nil {
		return err
	}
	return migrate(ctx, pool, schema, opts)
}

// MigrateTx is Migrate inside the caller's transaction: every migration runs
// in a savepoint of tx and takes effect when the caller commits; the
// caller's search_path is restored before it returns. On an error the
// caller must roll tx back.
func MigrateTx(ctx context.Context, tx pgx.Tx, opts MigrateOptions) error {
	if tx == nil {
		return invalidArgument("nil transaction")
	}
	if err := validateMigrateDirection(opts); err != nil {
		return err
	}
	schema, err := migrationSchema(opts, tx.Conn().Config().RuntimeParams)
	if err != nil {
		return err
	}
	return keepingSearchPath(ctx, tx, func() error { return migrate(ctx, tx, schema, opts) })
}

// MigrateStatus lists Docket's migrations and whether each is applied in the
// schema that Migrate would use with the same arguments. It keeps nothing:
// for a schema that holds Docket's objects but no Docket ledger, it tells
// which version they match by applying the migrations into a scratch schema
// inside its transaction, which it rolls back (the role needs CREATE on the
// database for that), and marks the migrations up to that version
// OutsideLedger. When they match no version it returns an
// *OutsideLedgerError matching ErrSchemaMismatch.
func MigrateStatus(ctx context.Context, databaseURL string, opts MigrateOptions) ([]MigrationStatus, error) {
	var statuses []MigrationStatus
	err := withMigrationConn(ctx, databaseURL, opts, func(conn *pgx.Conn, schema string) (err error) {
		statuses, err = migrationStatus(ctx, conn, schema, opts)
		return err
	})
	return statuses, err
}

// MigrateStatusWithPool is MigrateStatus over the application's own pool.
func MigrateStatusWithPool(ctx context.Context, pool *pgxpool.Pool, opts MigrateOptions) ([]MigrationStatus, error) {
	if pool == nil {
		return nil, invalidArgument("nil pool")
	}
	schema, err := migrationSchema(opts, pool.Config().ConnConfig.RuntimeParams)
	if err != nil {
		return nil, err
	}
	return migrationStatus(ctx, pool, schema, opts)
}

func validateMigrateDirection(opts MigrateOptions) error {
	if opts.Direction != MigrateUp && opts.Direction != MigrateDown && opts.Direction != MigrateAdopt {
		return invalidArgument("unknown migrate direction %d", opts.Direction)
	}
	return nil
}

// withMigrationConn resolves the schema of opts and opens one pgx
// connection to databaseURL for fn, so migrations use exactly the connection
// semantics of the rest of Docket (sslmode, DSNs, service files,
// environment), and reports pgx's own error.
func withMigrationConn(ctx context.Context, databaseURL string, opts MigrateOptions, fn func(conn *pgx.Conn, schema string) error) error {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return fmt.Errorf("docket: migrate: parsing the database URL: %w", err)
	}
	schema, err := migrationSchema(opts, cfg.RuntimeParams)
	if err != nil {
		return err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("docket: migrate: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return fn(conn, schema)
}

// migrationSchema is opts.Schema, else the first schema of the connection's
// search_path parameter, else "public"; it must be a plain identifier.
func migrationSchema(opts MigrateOptions, runtimeParams map[string]string) (string, error) {
	schema := opts.Schema
	if schema == "" {
		schema = strings.TrimSpace(strings.Split(runtimeParams["search_path"], ",")[0])
	}
	if schema == "" {
		schema = "public"
	}
	if !schemaNamePattern.MatchString(schema) {
		return "", fmt.Errorf("%w: %q", ErrInvalidSchemaName, schema)
	}
	return schema, nil
}
