// Package admin holds the integration tests of the operator surfaces: Admin's
// run lists and claim policy writes, the docket CLI and the console.
//
// Every test runs against a real PostgreSQL in its own database cloned from
// a migrated template; see internal/pgtest for how the server is found,
// started or shared.
package admin

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
