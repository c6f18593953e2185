package claim

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// terminate ends the backend pid with pg_terminate_backend.
func terminate(t testing.TB, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(testkit.Context(t), `select pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
}

// waitsOnLock reports whether backend pid is blocked on a heavyweight
// lock right now.
func waitsOnLock(t testing.TB, pool *pgxpool.Pool, pid uint32) bool {
	t.Helper()
	var waiting bool
	err := pool.QueryRow(testkit.Context(t),
		`select coalesce(bool_or(wait_event_type = 'Lock'), false) from pg_stat_activity where pid = $1`, pid).Scan(&waiting)
	if err != nil {
		t.Fatalf("wait state of backend %d: %v", pid, err)
	}
	return waiting
}
