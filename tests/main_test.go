// Package tests holds Docket's integration tests. Every test runs against a
// real PostgreSQL in its own database cloned from a migrated template; see
// internal/pgtest for how the server is found or started.
package tests

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
