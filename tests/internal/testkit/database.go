package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
)

// QueryExecModes are every pgx execution mode, including those a
// transaction pooler may require.
var QueryExecModes = []pgx.QueryExecMode{
	pgx.QueryExecModeCacheStatement,
	pgx.QueryExecModeCacheDescribe,
	pgx.QueryExecModeDescribeExec,
	pgx.QueryExecModeExec,
	pgx.QueryExecModeSimpleProtocol,
}

// Context returns a context cancelled when the test ends or after a minute.
func Context(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// NewPool returns a pool on a fresh migrated database of its own.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return PoolFor(t, pgtest.NewDatabase(t))
}

// PoolFor opens a pool on databaseURL that is closed when the test ends.
func PoolFor(t testing.TB, databaseURL string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), databaseURL)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// OpenClient opens a client on pool with cfg and fails the test on error.
func OpenClient(t testing.TB, pool *pgxpool.Pool, cfg docket.Config) *docket.Client {
	t.Helper()
	client, err := docket.Open(Context(t), pool, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return client
}

// TenantFairConfig is required tenancy with TenantFair at the given default cap.
func TenantFairConfig(defaultCap int) docket.Config {
	return docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: defaultCap},
	}
}

// LegacyConfig is tenant mode none with the Legacy engine.
func LegacyConfig() docket.Config {
	return docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}}
}

// ExecSQL runs statements on pool and fails the test on error.
func ExecSQL(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(Context(t), sql, args...); err != nil {
		t.Fatalf("exec %q: %v", sql, err)
	}
}

// QueryInt64 returns the single int64 that sql selects.
func QueryInt64(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var v int64
	if err := pool.QueryRow(Context(t), sql, args...).Scan(&v); err != nil {
		t.Fatalf("query %q: %v", sql, err)
	}
	return v
}
