package apptest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/policy"
)

// TestMain sets up the app's test databases: Docket's schema and the app's
// own table, migrated once into the template every test database clones.
func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m, func(ctx context.Context, databaseURL string) error {
		pool, err := pgxpool.New(ctx, databaseURL)
		if err != nil {
			return err
		}
		defer pool.Close()
		migrator, err := docket.NewMigrator(pool, docket.MigratorConfig{})
		if err != nil {
			return err
		}
		if err := migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `create table invoices (id bigint primary key)`); err != nil {
			return fmt.Errorf("create invoices: %w", err)
		}
		return nil
	}))
}

// newTestApp returns the app's pool on a fresh test database of its own,
// and a Docket client opened on it as the app opens its own.
func newTestApp(t *testing.T) (*pgxpool.Pool, *docket.Client) {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	client, err := docket.Open(context.Background(), pool, docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	return pool, client
}
