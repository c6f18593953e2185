package input

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/internal/testkit"
)

// badSchemaNames are schema names Migrate must refuse: anything that is
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

// migrateCase is one refused Migrate or MigrateStatus call.
type migrateCase struct {
	name string
	want error
	call func(ctx context.Context, databaseURL string) error
}

func migrateCases(t testing.TB) []migrateCase {
	var cases []migrateCase
	for _, name := range badSchemaNames {
		cases = append(cases,
			migrateCase{"Migrate up into " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return docket.Migrate(ctx, u, docket.MigrateOptions{Schema: name})
			}},
			migrateCase{"Migrate down in " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return docket.Migrate(ctx, u, docket.MigrateOptions{Schema: name, Direction: docket.MigrateDown})
			}},
			migrateCase{"MigrateStatus of " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				_, err := docket.MigrateStatus(ctx, u, docket.MigrateOptions{Schema: name})
				return err
			}},
		)
		// A search_path names its schemas separated by commas, and Migrate
		// takes the first, so a comma cannot be tried that way.
		if !strings.Contains(name, ",") {
			cases = append(cases, migrateCase{"Migrate up with search_path " + name, docket.ErrInvalidSchemaName, func(ctx context.Context, u string) error {
				return docket.Migrate(ctx, testkit.MigrationURLWithSearchPath(t, u, name), docket.MigrateOptions{})
			}})
		}
	}
	return append(cases,
		migrateCase{"Migrate unknown target", docket.ErrUnknownMigration, func(ctx context.Context, u string) error {
			return docket.Migrate(ctx, u, docket.MigrateOptions{Target: "20991231000000"})
		}},
		migrateCase{"MigrateStatus unknown target", docket.ErrUnknownMigration, func(ctx context.Context, u string) error {
			_, err := docket.MigrateStatus(ctx, u, docket.MigrateOptions{Target: "v2"})
			return err
		}},
		migrateCase{"Migrate direction 7", docket.ErrInvalidArgument, func(ctx context.Context, u string) error {
			return docket.Migrate(ctx, u, docket.MigrateOptions{Direction: 7})
		}},
		migrateCase{"Migrate cancelled context", context.Canceled, func(_ context.Context, u string) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return docket.Migrate(ctx, u, docket.MigrateOptions{})
		}},
		migrateCase{"MigrateStatus cancelled context", context.Canceled, func(_ context.Context, u string) error {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := docket.MigrateStatus(ctx, u, docket.MigrateOptions{})
			return err
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
	if err := docket.Migrate(testkit.Context(t), "postgres://%zz", docket.MigrateOptions{}); err == nil || errors.Is(err, docket.ErrInvalidSchemaName) {
		t.Fatalf("unparsable URL: %v, want a parse error", err)
	}
	tried++
	t.Logf("bad migrate inputs tried: %d (empty and migrated database); catalog and rows unchanged", tried)
}
