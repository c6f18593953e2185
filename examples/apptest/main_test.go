package apptest

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pglocal"
	"github.com/docketrun/docket-go/policy"
)

// The app's test server: a superuser URL of its maintenance database, and
// the template database every test database clones. Your app brings its
// own way to a test server; this one takes DOCKET_TEST_DATABASE_URL when
// set (as the repository's suite does), else starts a throwaway local
// cluster of major DOCKET_TEST_PG_VERSION, or of any installed one.
var (
	adminURL  string
	template  = "apptest_template"
	databases atomic.Int64
)

// TestMain sets up the app's test databases: Docket's schema and the app's
// own table, migrated once into the template every test database clones.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // newTestApp skips: no database with -short
	}
	ctx := context.Background()
	adminURL = os.Getenv("DOCKET_TEST_DATABASE_URL")
	if adminURL == "" {
		srv, err := pglocal.Start(ctx, pglocal.Options{Version: os.Getenv("DOCKET_TEST_PG_VERSION")})
		if err != nil {
			fmt.Fprintf(os.Stderr, "apptest: no PostgreSQL for the tests: %v\n", err)
			os.Exit(1)
		}
		adminURL = srv.URL("postgres")
		code := run(ctx, m)
		if err := srv.Stop(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "apptest: stopping PostgreSQL: %v\n", err)
		}
		os.Exit(code)
	}
	template = fmt.Sprintf("apptest_template_%d", os.Getpid()) // a shared server: a name of its own
	os.Exit(run(ctx, m))
}

// run migrates the template, runs the tests and drops the template.
func run(ctx context.Context, m *testing.M) int {
	if _, err := url.Parse(adminURL); err != nil {
		fmt.Fprintf(os.Stderr, "apptest: the server URL: %v\n", err)
		return 1
	}
	if err := admin(ctx, "create database "+pgx.Identifier{template}.Sanitize()); err != nil {
		fmt.Fprintf(os.Stderr, "apptest: %v\n", err)
		return 1
	}
	defer func() {
		if err := admin(ctx, "drop database "+pgx.Identifier{template}.Sanitize()+" with (force)"); err != nil {
			fmt.Fprintf(os.Stderr, "apptest: %v\n", err)
		}
	}()
	if err := migrateTemplate(ctx, databaseURL(template)); err != nil {
		fmt.Fprintf(os.Stderr, "apptest: migrating the template: %v\n", err)
		return 1
	}
	return m.Run()
}

// migrateTemplate installs Docket's schema and the app's table.
func migrateTemplate(ctx context.Context, databaseURL string) error {
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
}

// admin runs one statement in the server's maintenance database.
func admin(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// databaseURL is adminURL naming the database name instead (run checked
// that it parses).
func databaseURL(name string) string {
	u, _ := url.Parse(adminURL)
	u.Path = "/" + name
	return u.String()
}

// newTestApp returns the app's pool on a fresh test database of its own,
// cloned from the template, and a Docket client opened on it as the app
// opens its own.
func newTestApp(t *testing.T) (*pgxpool.Pool, *docket.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a database; skipped with -short")
	}
	ctx := context.Background()
	name := fmt.Sprintf("%s_%d", template, databases.Add(1))
	if err := admin(ctx, "create database "+pgx.Identifier{name}.Sanitize()+" template "+pgx.Identifier{template}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := admin(ctx, "drop database "+pgx.Identifier{name}.Sanitize()+" with (force)"); err != nil {
			t.Error(err)
		}
	})
	pool, err := pgxpool.New(ctx, databaseURL(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	client, err := docket.Open(ctx, pool, docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4},
	})
	if err != nil {
		t.Fatal(err)
	}
	return pool, client
}
