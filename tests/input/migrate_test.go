package input

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// badSchemaNames are schema names a Migrator must refuse: anything that is
// not a plain identifier of at most 63 bytes.
var badSchemaNames = []string{
	`bad"name`,
	`a;drop table docket_runs`,
	`docket schema`,
	`Ünïcode`,
	`1leading_digit`,
	`-dash`,
	`x'y`,
	`$1`,
	`public,evil`,
	`tab	name`,
	`new
line`,
	strings.Repeat("s", 64),
	`"quoted"`,
	`schema.name`,
}

// migrateCase is one refused Migrator call (or NewMigratorURL refusing to
// make the Migrator).
type migrateCase struct {
	name string
	want error
	call func(ctx context.Context, databaseURL string) error
}

// migrateURL makes a Migrator over databaseURL and migrates: the error of
// whichever step refuses.
func migrateURL(ctx context.Context, databaseURL string, config docket.MigratorConfig, direction docket.MigrateDirection, opts docket.MigrateOptions) error {
	m, err := docket.NewMigratorURL(databaseURL, config)
	if err != nil {
		return err
	}
	return m.Migrate(ctx, direction, opts)
}

// statusURL makes a Migrator over databaseURL and lists its status.
func statusURL(ctx context.Context, databaseURL string, config docket.MigratorConfig, opts docket.MigrateOptions) error {
	m, err := docket.NewMigratorURL(databaseURL, config)
	if err != nil {
		return err
	}
	_, err = m.Status(ctx, opts)
	return err
}

func migrateCases(t testing.TB) []migrateCase {
	var cases []migrateCase
	for _, name := range badSchemaNames {
		cases = append(cases,
			migrateCase{"Migrate up into " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return migrateURL(ctx, u, docket.MigratorConfig{Schema: name}, docket.MigrateUp, docket.MigrateOptions{})
			}},
			migrateCase{"Migrate down in " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return migrateURL(ctx, u, docket.MigratorConfig{Schema: name}, docket.MigrateDown, docket.MigrateOptions{})
			}},
			migrateCase{"Status of " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return statusURL(ctx, u, docket.MigratorConfig{Schema: name}, docket.MigrateOptions{})
			}},
			migrateCase{"NewMigrator without a pool into " + name, docket.ErrInvalidSchemaName, func(context.Context, string) error {
				_, err := docket.NewMigrator(nil, docket.MigratorConfig{Schema: name})
				return err
			}},
		)
		// A search_path names its schemas separated by commas, and a
		// Migrator takes the first, so a comma cannot be tried that way.
		if !strings.Contains(name, ",") {
			cases = append(cases, migrateCase{"Migrate up with search_path " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return migrateURL(ctx, testkit.MigrationURLWithSearchPath(t, u, name), docket.MigratorConfig{}, docket.MigrateUp, docket.MigrateOptions{})
			}})
		}
	}
	return append(cases,
		migrateCase{"Migrate unknown target", docket.ErrUnknownMigration, func(ctx context.Context, u string) error {
			return migrateURL(ctx, u, docket.MigratorConfig{}, docket.MigrateUp, docket.MigrateOptions{Target: "20991231000000"})
		}},
		migrateCase{"Status unknown target", docket.ErrUnknownMigration, func(ctx context.Context, u string) error {
			return statusURL(ctx, u, docket.MigratorConfig{}, docket.MigrateOptions{Target: "v2"})
		}},
		migrateCase{"Migrate direction 7", docket.ErrInvalidArgument, func(ctx context.Context, u string) error {
			return migrateURL(ctx, u, docket.MigratorConfig{}, 7, docket.MigrateOptions{})
		}},
		migrateCase{"Migrate without a pool", docket.ErrInvalidArgument, func(ctx context.Context, _ string) error {
			m, err := docket.NewMigrator(nil, docket.MigratorConfig{})
			if err != nil {
				return err
			}
			return m.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{})
		}},
		migrateCase{"MigrateTx nil transaction", docket.ErrInvalidArgument, func(ctx context.Context, _ string) error {
			m, err := docket.NewMigrator(nil, docket.MigratorConfig{})
			if err != nil {
				return err
			}
			return m.MigrateTx(ctx, nil, docket.MigrateUp, docket.MigrateOptions{})
		}},
		migrateCase{"Migrate cancelled context", context.Canceled, func(_ context.Context, u string) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return migrateURL(ctx, u, docket.MigratorConfig{}, docket.MigrateUp, docket.MigrateOptions{})
		}},
		migrateCase{"Status cancelled context", context.Canceled, func(_ context.Context, u string) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return statusURL(ctx, u, docket.MigratorConfig{}, docket.MigrateOptions{})
		}},
	)
}

func TestMigrateRefusesBadInputAndCreatesNothing(t *testing.T) {
	t.Parallel()
	empty := pgtest.NewEmptyDatabase(t)
	migrated := pgtest.NewDatabase(t)
	emptyPool, migratedPool := testkit.PoolFor(t, empty), testkit.PoolFor(t, migrated)
	tried := 0
	for _, c := range migrateCases(t) {
		t.Run(c.name, func(t *testing.T) {
			for _, target := range []struct {
				url  string
				pool *pgxpool.Pool
			}{{empty, emptyPool}, {migrated, migratedPool}} {
				catalog := testkit.Catalog(t, target.pool)
				var before testkit.Snapshot
				if target.url == migrated {
					before = testkit.Snap(t, target.pool)
				}
				err := c.call(testkit.Context(t), target.url)
				if !errors.Is(err, c.want) {
					t.Fatalf("error %v, want %v", err, c.want)
				}
				if after := testkit.Catalog(t, target.pool); after != catalog {
					t.Fatalf("catalog changed:\nbefore %s\nafter  %s", catalog, after)
				}
				if before != nil {
					testkit.ExpectUnchanged(t, c.name, before, testkit.Snap(t, target.pool))
				}
				tried++
			}
		})
	}
	// A URL that does not parse is refused before any connection.
	if _, err := docket.NewMigratorURL("postgres://%zz", docket.MigratorConfig{}); err == nil || errors.Is(err, docket.ErrInvalidSchemaName) {
		t.Fatalf("unparsable URL: %v, want a parse error", err)
	}
	tried++
	t.Logf("bad migrate inputs tried: %d (empty and migrated database); catalog and rows unchanged", tried)
}
