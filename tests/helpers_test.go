package tests

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/policy"
)

// queryExecModes are every pgx execution mode, including those a
// transaction pooler may require.
var queryExecModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeSimpleProtocol,
}

// testContext returns a context cancelled when the test ends or after a minute.
func testContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// newPool returns a pool on a fresh migrated database of its own.
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return poolFor(t, pgtest.NewDatabase(t))
}

// poolFor opens a pool on databaseURL that is closed when the test ends.
func poolFor(t testing.TB, databaseURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), databaseURL)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// openClient opens a client on pool with cfg and fails the test on error.
func openClient(t testing.TB, pool *pgxpool.Pool, cfg docket.Config) *docket.Client {
	t.Helper()
	client, err := docket.Open(testContext(t), pool, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return client
}

// tenantFairConfig is required tenancy with TenantFair at the given default cap.
func tenantFairConfig(defaultCap int) docket.Config {
	return docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: defaultCap},
	}
}

// legacyConfig is tenant mode none with the Legacy engine.
func legacyConfig() docket.Config {
	return docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}}
}

// execSQL runs statements on pool and fails the test on error.
func execSQL(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(testContext(t), sql, args...); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}

// queryInt64 returns the single int64 that sql selects.
func queryInt64(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var v int64
	if err := pool.QueryRow(testContext(t), sql, args...).Scan(&v); err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return v
}
