package docket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/amacneil/dbmate/v2/pkg/dbmate"
	// Registers dbmate's PostgreSQL driver for postgres:// URLs.
	_ "github.com/amacneil/dbmate/v2/pkg/driver/postgres"

	"github.com/docketrun/docket-go/db"
)

// MigrateDirection selects what Migrate does.
type MigrateDirection int

const (
	// MigrateUp applies every pending migration (a fresh install gets V1 and V2).
	MigrateUp MigrateDirection = iota
	// MigrateDown rolls back the newest applied migration (e.g. V3 -> V2).
	MigrateDown
)

// MigrateOptions configures Migrate.
type MigrateOptions struct {
	// Schema is the schema (the "prefix") to install into. Empty means the
	// first schema of the URL's search_path parameter, else "public".
	Schema string
	// Direction is MigrateUp (default) or MigrateDown.
	Direction MigrateDirection
	// Log receives dbmate's progress lines; nil discards them.
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
}

// ErrInvalidSchemaName reports a schema name Migrate refuses to use.
var ErrInvalidSchemaName = errors.New("docket: invalid schema name")

// schemaNamePattern keeps schema names to plain identifiers: dbmate's
// search_path handling splits on commas and the name lands in DDL.
var schemaNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// Migrate applies (or rolls back one of) Docket's migrations in the schema
// named by opts.Schema or by the URL's search_path. Each migration runs in its
// own transaction, so a failed upgrade leaves the previous version intact.
func Migrate(ctx context.Context, databaseURL string, opts MigrateOptions) error {
	if opts.Direction != MigrateUp && opts.Direction != MigrateDown {
		return invalidArgument("unknown migrate direction %d", opts.Direction)
	}
	mate, err := newMigrator(databaseURL, opts)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	switch opts.Direction {
	case MigrateUp:
		err = mate.Migrate()
	case MigrateDown:
		err = mate.Rollback()
	}
	if err != nil {
		return fmt.Errorf("docket: migrate: %w", err)
	}
	return nil
}

// MigrateStatus lists Docket's migrations and whether each is applied in the
// schema that Migrate would use with the same arguments.
func MigrateStatus(ctx context.Context, databaseURL string, opts MigrateOptions) ([]MigrationStatus, error) {
	mate, err := newMigrator(databaseURL, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	results, err := mate.FindMigrations()
	if err != nil {
		return nil, fmt.Errorf("docket: migration status: %w", err)
	}
	out := make([]MigrationStatus, 0, len(results))
	for _, r := range results {
		out = append(out, MigrationStatus{Name: r.FileName, Applied: r.Applied})
	}
	return out, nil
}

func newMigrator(databaseURL string, opts MigrateOptions) (*dbmate.DB, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("docket: parse database URL: %w", err)
	}
	if u.Scheme == "postgresql" {
		u.Scheme = "postgres"
	}
	schema := opts.Schema
	if schema == "" {
		schema = strings.TrimSpace(strings.Split(u.Query().Get("search_path"), ",")[0])
	}
	if schema == "" {
		schema = "public"
	}
	if !schemaNamePattern.MatchString(schema) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidSchemaName, schema)
	}
	// The functions capture this search_path (SET search_path FROM CURRENT),
	// which binds them to the schema they are installed in.
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()

	migrations, err := migrationsUpTo(opts.Target)
	if err != nil {
		return nil, err
	}

	mate := dbmate.New(u)
	mate.FS = migrations
	mate.MigrationsDir = []string{db.MigrationsDir}
	mate.AutoDumpSchema = false
	mate.Strict = true
	mate.Log = io.Discard
	if opts.Log != nil {
		mate.Log = opts.Log
	}
	return mate, nil
}

// ErrUnknownMigration reports a MigrateOptions.Target that names no embedded
// migration.
var ErrUnknownMigration = errors.New("docket: unknown migration version")

// migrationsUpTo returns the embedded migrations, without those newer than
// target when target is set.
func migrationsUpTo(target string) (fs.FS, error) {
	if target == "" {
		return db.Migrations, nil
	}
	versions, err := embeddedVersions()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(versions, target) {
		return nil, fmt.Errorf("%w: %q (known: %v)", ErrUnknownMigration, target, versions)
	}
	return targetFS{FS: db.Migrations, target: target}, nil
}

// targetFS hides the migrations newer than target from dbmate's directory
// listing; versions share one fixed width, so string order is version order.
type targetFS struct {
	fs.FS
	target string
}

// ReadDir implements fs.ReadDirFS.
func (t targetFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(t.FS, name)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		version, _, _ := strings.Cut(e.Name(), "_")
		return version > t.target
	}), nil
}
