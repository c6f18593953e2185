package testkit

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/tests/internal/pgbouncer"
)

// StartBouncer starts PgBouncer in transaction pooling mode in front of
// upstream with poolSize server connections, stopped when the test ends. A
// missing pgbouncer binary fails the test: make test installs it.
func StartBouncer(t *testing.T, upstream string, poolSize int) *pgbouncer.Bouncer {
	t.Helper()
	b, err := pgbouncer.Start(Context(t), pgbouncer.Options{Upstream: upstream, PoolSize: poolSize})
	if err != nil {
		t.Fatalf("PgBouncer is required by this test (Debian package pgbouncer): %v", err)
	}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Errorf("stop PgBouncer: %v", err)
		}
	})
	return b
}

// BouncerPool opens a pool through b with the setting docs/operations.md
// prescribes for transaction pooling.
func BouncerPool(t *testing.T, b *pgbouncer.Bouncer, size int32) *pgxpool.Pool {
	t.Helper()
	cfg := PoolConfig(t, b.URL(), size)
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	return Pool(t, cfg)
}
