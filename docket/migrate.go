package docket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/amacneil/dbmate/v2/pkg/dbmate"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/db"
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
	// RequireInstalled refuses a schema in which no Docket migration is
	// applied (it does not exist, or holds no Docket tables) with
	// ErrNotInstalled, changing nothing: MigrateUp then installs nothing
	// instead of making the schema a new domain, MigrateDown creates
	// nothing, and Status returns the error instead of listing every
	// migration as pending. For upgrades, where a mistyped schema name
	// would otherwise become a new, empty domain; `docket migrate` sets it
	// unless `up` is given --create. MigrateAdopt ignores it.
	RequireInstalled bool
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

// ErrNotInstalled reports, under MigrateOptions.RequireInstalled, a schema
// in which no Docket migration is applied: it does not exist, or it holds no
// Docket tables. Nothing was changed.
var ErrNotInstalled = errors.New("docket: Docket not installed")

// notInstalled is the ErrNotInstalled refusal of schema.
func notInstalled(schema string, exists bool) error {
	if !exists {
		return fmt.Errorf("%w: schema %s does not exist", ErrNotInstalled, schema)
	}
	return fmt.Errorf("%w: no Docket migration is applied in schema %s", ErrNotInstalled, schema)
}

// ErrUnknownMigration reports a MigrateOptions.Target (or a version asked
// of Migrator.SQL) that names no embedded migration.
var ErrUnknownMigration = errors.New("docket: unknown migration version")

// migration is one embedded migration in dbmate's format, parsed.
type migration struct {
	version string
	name    string
	up      string
	down    string
}

// embeddedMigrations parses every embedded migration, oldest first, with
// dbmate's own parser: the files stay dbmate migrations, whatever runs them.
func embeddedMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(db.Migrations, db.MigrationsDir)
	if err != nil {
		return nil, fmt.Errorf("docket: reading embedded migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		version, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := dbmate.Migration{FileName: e.Name(), FilePath: path.Join(db.MigrationsDir, e.Name()), FS: db.Migrations, Version: version}
		parsed, err := m.Parse()
		if err != nil {
			return nil, fmt.Errorf("docket: parsing embedded migration %s: %w", e.Name(), err)
		}
		if !parsed.UpOptions.Transaction() || !parsed.DownOptions.Transaction() {
			return nil, fmt.Errorf("docket: embedded migration %s must run in a transaction", e.Name())
		}
		out = append(out, migration{version: version, name: e.Name(), up: sectionBody(parsed.Up), down: sectionBody(parsed.Down)})
	}
	slices.SortFunc(out, func(a, b migration) int { return strings.Compare(a.version, b.version) })
	return out, nil
}

// sectionBody drops the "-- migrate:up" or "-- migrate:down" line that
// dbmate's parser keeps at the start of a section, so a section can be
// written into another tool's layout.
func sectionBody(section string) string {
	if strings.HasPrefix(section, "-- migrate:") {
		if _, rest, ok := strings.Cut(section, "\n"); ok {
			return rest
		}
		return ""
	}
	return section
}

// migrationsUpTo returns the embedded migrations, without those newer than
// target when target is set; versions share one fixed width, so string
// order is version order.
func migrationsUpTo(target string) ([]migration, error) {
	all, err := embeddedMigrations()
	if err != nil {
		return nil, err
	}
	if target == "" {
		return all, nil
	}
	at := slices.IndexFunc(all, func(m migration) bool { return m.version == target })
	if at < 0 {
		return nil, fmt.Errorf("%w: %q (known: %v)", ErrUnknownMigration, target, versionsOf(all))
	}
	return all[:at+1], nil
}

// versionsOf lists the versions of ms in order.
func versionsOf(ms []migration) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.version
	}
	return out
}

// embeddedVersions lists the versions of the embedded migrations.
func embeddedVersions() ([]string, error) {
	all, err := embeddedMigrations()
	if err != nil {
		return nil, err
	}
	return versionsOf(all), nil
}

// MigrationFormat names the file layout of a migration tool, for apps that
// apply Docket's migrations with their own tool instead of a Migrator.
type MigrationFormat string

const (
	// FormatPlain is one "NAME.up.sql" and one "NAME.down.sql" per migration,
	// each wrapped in begin/commit, for psql -f or any SQL runner.
	FormatPlain MigrationFormat = "plain"
	// FormatDbmate is one "VERSION_NAME.sql" per migration with
	// "-- migrate:up" and "-- migrate:down" sections.
	FormatDbmate MigrationFormat = "dbmate"
	// FormatGoose is one "VERSION_NAME.sql" per migration with goose's Up and
	// Down annotations; each section is one statement block.
	FormatGoose MigrationFormat = "goose"
	// FormatGolangMigrate is one "VERSION_NAME.up.sql" and one
	// "VERSION_NAME.down.sql" per migration.
	FormatGolangMigrate MigrationFormat = "golang-migrate"
)

// MigrationFormats lists every format Migrator.Files writes.
var MigrationFormats = []MigrationFormat{FormatPlain, FormatDbmate, FormatGoose, FormatGolangMigrate}

// MigrationFile is one file of Docket's migrations in some tool's layout.
type MigrationFile struct {
	// Version is the migration's version, e.g. "20261101000002".
	Version string
	// Name is the file name the tool expects.
	Name string
	// SQL is the file's content.
	SQL string
}

// Files returns Docket's migrations, oldest first, as the files of format;
// it needs no database. Every file applies into the connection's current schema (the
// first schema of its search_path), which the functions then stay bound to.
// A schema applied this way keeps no Docket ledger; Open judges it by its
// shape.
func (m *Migrator) Files(format MigrationFormat) ([]MigrationFile, error) {
	if !slices.Contains(MigrationFormats, format) {
		return nil, invalidArgument("unknown migration format %q (want one of %v)", format, MigrationFormats)
	}
	ms, err := embeddedMigrations()
	if err != nil {
		return nil, err
	}
	var files []MigrationFile
	for _, m := range ms {
		base := strings.TrimSuffix(m.name, ".sql")
		switch format {
		case FormatPlain:
			files = append(files,
				MigrationFile{m.version, base + ".up.sql", "begin;\n" + m.up + "\ncommit;\n"},
				MigrationFile{m.version, base + ".down.sql", "begin;\n" + m.down + "\ncommit;\n"})
		case FormatGolangMigrate:
			files = append(files,
				MigrationFile{m.version, base + ".up.sql", m.up},
				MigrationFile{m.version, base + ".down.sql", m.down})
		case FormatDbmate:
			files = append(files, MigrationFile{m.version, m.name, "-- migrate:up\n" + m.up + "\n-- migrate:down\n" + m.down})
		case FormatGoose:
			files = append(files, MigrationFile{m.version, m.name,
				"-- +goose Up\n-- +goose StatementBegin\n" + m.up + "\n-- +goose StatementEnd\n\n" +
					"-- +goose Down\n-- +goose StatementBegin\n" + m.down + "\n-- +goose StatementEnd\n"})
		}
	}
	return files, nil
}

// SQL returns the up or down section of one migration as plain SQL,
// without a transaction wrapper: what Migrate runs in its transaction. It
// needs no database.
func (m *Migrator) SQL(version string, direction MigrateDirection) (string, error) {
	if direction != MigrateUp && direction != MigrateDown {
		return "", invalidArgument("migration SQL has an up and a down section, not direction %d", direction)
	}
	ms, err := embeddedMigrations()
	if err != nil {
		return "", err
	}
	at := slices.IndexFunc(ms, func(m migration) bool { return m.version == version })
	if at < 0 {
		return "", fmt.Errorf("%w: %q (known: %v)", ErrUnknownMigration, version, versionsOf(ms))
	}
	if direction == MigrateDown {
		return ms[at].down, nil
	}
	return ms[at].up, nil
}
