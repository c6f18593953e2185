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

// MigrateDirection selects what Migrator.Migrate and Migrator.MigrateTx do.
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

// MigratorConfig configures a Migrator.
type MigratorConfig struct {
	// Schema is the schema (the "prefix") to install into; Migrate creates
	// it when it does not exist. Empty means the first schema of the
	// connection's search_path parameter, else "public".
	Schema string
	// Log receives one line per migration applied, rolled back or adopted,
	// or one line saying nothing was pending; nil discards them.
	Log io.Writer
}

// MigrateOptions configures one call of Migrate, MigrateTx or Status.
type MigrateOptions struct {
	// Target, when set, is the version of the newest migration to consider
	// (e.g. "20261101000001" for V1 only): MigrateUp stops there, MigrateAdopt
	// compares the schema with the versions up to it only, and Status lists
	// no later migration. Empty means every migration. MigrateDown ignores
	// it.
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

// ErrInvalidSchemaName reports a schema name a Migrator refuses to use.
var ErrInvalidSchemaName = errors.New("docket: invalid schema name")

// schemaNamePattern keeps schema names to plain identifiers: a search_path
// lists schemas separated by commas and the name lands in DDL.
var schemaNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Migrator applies, rolls back, lists and adopts Docket's migrations in one
// schema, over the application's pool (NewMigrator) or over a connection
// of its own to a database URL (NewMigratorURL); it also hands the
// migrations to an app that applies them with its own tool (Files, SQL).
// Each migration runs in its own transaction, so a failed upgrade leaves
// the previous version intact; concurrent Migrators of one schema take
// turns under the schema's migration lock. A schema that holds Docket's
// objects but keeps no Docket ledger (another tool applied the files) is
// refused by MigrateUp and MigrateDown with an *OutsideLedgerError,
// changing nothing: MigrateAdopt records it first. A Migrator is safe for
// concurrent use.
type Migrator struct {
	pool   *pgxpool.Pool
	url    *pgx.ConnConfig // set by NewMigratorURL
	schema string          // resolved; empty for a nil pool without Config.Schema
	config MigratorConfig
}

// NewMigrator returns a Migrator over the application's own pool: each
// migration runs in its own transaction on one of the pool's connections,
// in config.Schema or else the schema of the pool's search_path parameter.
// A nil pool makes a Migrator for MigrateTx, Files and SQL only; its
// Migrate and Status return ErrInvalidArgument. A schema name that is not
// a plain identifier is ErrInvalidSchemaName.
func NewMigrator(pool *pgxpool.Pool, config MigratorConfig) (*Migrator, error) {
	m := &Migrator{pool: pool, config: config}
	if pool == nil && config.Schema == "" {
		return m, nil
	}
	var params map[string]string
	if pool != nil {
		params = pool.Config().ConnConfig.RuntimeParams
	}
	schema, err := migrationSchema(config, params)
	if err != nil {
		return nil, err
	}
	m.schema = schema
	return m, nil
}

// NewMigratorURL returns a Migrator that opens one pgx connection to
// databaseURL (a URL or a keyword/value DSN, anything pgx.ParseConfig
// accepts) for each Migrate and Status call and closes it before
// returning, so migrations use exactly the connection semantics of the
// rest of Docket (sslmode, DSNs, service files, environment). It connects
// to nothing itself: a URL pgx cannot parse is an error here, a database
// it cannot reach one of the first call.
func NewMigratorURL(databaseURL string, config MigratorConfig) (*Migrator, error) {
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("docket: migrate: parsing the database URL: %w", err)
	}
	schema, err := migrationSchema(config, cfg.RuntimeParams)
	if err != nil {
		return nil, err
	}
	return &Migrator{url: cfg, schema: schema, config: config}, nil
}

// Migrate applies every pending migration (MigrateUp), rolls back the
// newest applied one (MigrateDown) or records what another tool applied
// (MigrateAdopt), each in its own transaction, and writes what it did to
// Config.Log.
func (m *Migrator) Migrate(ctx context.Context, direction MigrateDirection, opts MigrateOptions) error {
	if err := validateMigrateDirection(direction); err != nil {
		return err
	}
	return m.withDatabase(ctx, func(b txBeginner) error {
		return migrate(ctx, b, m.schema, direction, opts, m.config.Log)
	})
}

// MigrateTx is Migrate inside the caller's transaction: every migration runs
// in a savepoint of tx and takes effect when the caller commits; the
// caller's search_path is restored before it returns. Without
// Config.Schema the schema is the first of the search_path parameter of
// tx's connection. On an error the caller must roll tx back.
func (m *Migrator) MigrateTx(ctx context.Context, tx pgx.Tx, direction MigrateDirection, opts MigrateOptions) error {
	if tx == nil {
		return invalidArgument("nil transaction")
	}
	if err := validateMigrateDirection(direction); err != nil {
		return err
	}
	schema, err := migrationSchema(m.config, tx.Conn().Config().RuntimeParams)
	if err != nil {
		return err
	}
	return keepingSearchPath(ctx, tx, func() error { return migrate(ctx, tx, schema, direction, opts, m.config.Log) })
}

// Status lists Docket's migrations and whether each is applied in the
// Migrator's schema. It keeps nothing: for a schema that holds Docket's
// objects but no Docket ledger, it tells which version they match by
// applying the migrations into a scratch schema inside its transaction,
// which it rolls back (the role needs CREATE on the database for that),
// and marks the migrations up to that version OutsideLedger. When they
// match no version it returns an *OutsideLedgerError matching
// ErrSchemaMismatch.
func (m *Migrator) Status(ctx context.Context, opts MigrateOptions) ([]MigrationStatus, error) {
	var statuses []MigrationStatus
	err := m.withDatabase(ctx, func(b txBeginner) (err error) {
		statuses, err = migrationStatus(ctx, b, m.schema, opts)
		return err
	})
	return statuses, err
}

func validateMigrateDirection(direction MigrateDirection) error {
	if direction != MigrateUp && direction != MigrateDown && direction != MigrateAdopt {
		return invalidArgument("unknown migrate direction %d", direction)
	}
	return nil
}

// withDatabase runs fn over the Migrator's pool, or over one connection to
// its URL opened for fn, and reports pgx's own error.
func (m *Migrator) withDatabase(ctx context.Context, fn func(b txBeginner) error) error {
	if m.url == nil {
		if m.pool == nil {
			return invalidArgument("nil pool")
		}
		return fn(m.pool)
	}
	conn, err := pgx.ConnectConfig(ctx, m.url.Copy())
	if err != nil {
		return fmt.Errorf("docket: migrate: connecting: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return fn(conn)
}

// migrationSchema is config.Schema, else the first schema of the
// connection's search_path parameter, else "public"; it must be a plain
// identifier.
func migrationSchema(config MigratorConfig, runtimeParams map[string]string) (string, error) {
	schema := config.Schema
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
