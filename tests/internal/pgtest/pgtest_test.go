package pgtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) {
	os.Exit(Main(m, func(ctx context.Context, databaseURL string) error {
		conn, err := pgx.Connect(ctx, databaseURL)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "create table marker (id int primary key); insert into marker values (42)")
		if err != nil {
			return fmt.Errorf("create marker: %w", err)
		}
		return nil
	}))
}

func TestNewDatabaseIsMigratedAndPrivate(t *testing.T) {
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, NewDatabase(t))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer conn.Close(ctx)
			// Each database is private: the insert is visible only here.
			if _, err := conn.Exec(ctx, "insert into marker values ($1)", i); err != nil {
				t.Fatalf("insert: %v", err)
			}
			var n int
			if err := conn.QueryRow(ctx, "select count(*) from marker").Scan(&n); err != nil || n != 2 {
				t.Fatalf("marker rows = %d, %v; want 2", n, err)
			}
		})
	}
}

func TestNewEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, NewEmptyDatabase(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "select to_regclass('marker') is not null").Scan(&exists); err != nil || exists {
		t.Fatalf("marker exists = %v, %v; want an empty database", exists, err)
	}
}

func TestHarnessInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("no harness with -short")
	}
	if AdminURL() == "" {
		t.Fatal("AdminURL is empty inside Main")
	}
	if ServerMajorVersion() < 10 {
		t.Errorf("ServerMajorVersion = %d", ServerMajorVersion())
	}
	if os.Getenv(EnvDatabaseURL) == "" && !dockerAnswers(context.Background()) && LocalServer() == nil {
		t.Error("LocalServer is nil although the harness had to start a local cluster")
	}
}

func TestDatabaseURL(t *testing.T) {
	for _, c := range []struct{ base, want string }{
		{"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "postgres://postgres@127.0.0.1:5432/db1?sslmode=disable"},
		{"postgresql://u:p@h/x", "postgresql://u:p@h/db1"},
		{"host=h user=u dbname=postgres", "host=h user=u dbname=postgres dbname='db1'"},
	} {
		if got := DatabaseURL(c.base, "db1"); got != c.want {
			t.Errorf("DatabaseURL(%q) = %q, want %q", c.base, got, c.want)
		}
	}
}
