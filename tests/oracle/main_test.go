// Package oracle holds the differential tests that run the same operations on
// PostgreSQL and on the database-free oracle, and the fair rotation check
// against the oracle.
//
// Every test runs against a real PostgreSQL in its own database cloned from
// a migrated template; see internal/pgtest for how the server is found,
// started or shared.
package oracle

import (
	"context"
	"os"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
)

func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, databaseURL string) error {
		return docket.Migrate(ctx, databaseURL, docket.MigrateOptions{})
	}))
}
