package migration

import (
	"bytes"
	"errors"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// MigrateOptions.RequireInstalled refuses, with ErrNotInstalled and
// nothing created or logged, up, down and status of a schema that does not
// exist or where no Docket migration is applied, through a Migrator's own
// connection and inside the caller's transaction alike; once Docket is
// installed it changes nothing.
func TestMigrateRequireInstalled(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	databaseURL := pgtest.NewEmptyDatabase(t)
	pool := testkit.PoolFor(t, databaseURL)
	testkit.ExecSQL(t, pool, `create schema app`)
	empty := testkit.Catalog(t, pool)
	required := docket.MigrateOptions{RequireInstalled: true}
	for _, c := range []struct{ schema, text string }{
		{"missing", "docket: Docket not installed: schema missing does not exist"},
		{"app", "docket: Docket not installed: no Docket migration is applied in schema app"},
	} {
		var log bytes.Buffer
		m := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: c.schema, Log: &log})
		for _, direction := range []docket.MigrateDirection{docket.MigrateUp, docket.MigrateDown} {
			if err := m.Migrate(ctx, direction, required); !errors.Is(err, docket.ErrNotInstalled) || err.Error() != c.text {
				t.Fatalf("%s, direction %d: %v, want %s", c.schema, direction, err, c.text)
			}
		}
		if _, err := m.Status(ctx, required); !errors.Is(err, docket.ErrNotInstalled) || err.Error() != c.text {
			t.Fatalf("%s status: %v, want %s", c.schema, err, c.text)
		}
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = testkit.PoolMigrator(t, nil, docket.MigratorConfig{Schema: c.schema}).MigrateTx(ctx, tx, docket.MigrateUp, required)
		_ = tx.Rollback(ctx)
		if !errors.Is(err, docket.ErrNotInstalled) {
			t.Fatalf("%s MigrateTx: %v, want ErrNotInstalled", c.schema, err)
		}
		if log.Len() != 0 {
			t.Fatalf("%s: refusals logged %q", c.schema, log.String())
		}
		if got := testkit.Catalog(t, pool); got != empty {
			t.Fatalf("%s: refusals changed the catalog: %s, was %s", c.schema, got, empty)
		}
	}
	// Installed without the option, the schema is then served with it.
	testkit.MigrateOrFail(t, databaseURL, testkit.MigrateCall{Schema: "app"})
	m := testkit.URLMigrator(t, databaseURL, docket.MigratorConfig{Schema: "app"})
	if err := m.Migrate(ctx, docket.MigrateUp, required); err != nil {
		t.Fatalf("up of an installed schema: %v", err)
	}
	statuses, err := m.Status(ctx, required)
	if err != nil || len(statuses) != len(testkit.MigrationNames) || !statuses[len(statuses)-1].Applied {
		t.Fatalf("status of an installed schema: %+v, %v", statuses, err)
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{Schema: "app"}, testkit.MigrationAllVersions...)
}
