package testkit

import (
	"context"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
)

// Main runs a test package's tests on the shared harness: pgtest finds or
// starts the server and clones each test's database from a template that
// Docket's migrations brought to the newest schema. A package's TestMain is
// os.Exit(testkit.Main(m)). A docket command the tests built (DocketBinary)
// is removed after them.
func Main(m *testing.M) int {
	defer removeDocketBinary()
	return pgtest.Main(m, func(ctx context.Context, databaseURL string) error {
		migrator, err := docket.NewMigratorURL(databaseURL, docket.MigratorConfig{})
		if err != nil {
			return err
		}
		return migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{})
	})
}
