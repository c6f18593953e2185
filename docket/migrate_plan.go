package docket

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/amacneil/dbmate/v2/pkg/dbmate"

	"github.com/docketrun/docket-go/db"
)

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
