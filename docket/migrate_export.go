package docket

import (
	"fmt"
	"slices"
	"strings"
)

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
