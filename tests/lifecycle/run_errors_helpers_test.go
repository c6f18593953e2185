package lifecycle

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Helpers of the error-history and retry-policy tests.

// violates reports whether sql fails on the named check constraint.
func violates(t testing.TB, pool *pgxpool.Pool, constraint, sql string, args ...any) bool {
	t.Helper()
	_, err := pool.Exec(testkit.Context(t), sql, args...)
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	if !ok || pgErr.Code != "23514" || pgErr.ConstraintName != constraint {
		t.Logf("%s: %v", sql, err)
		return false
	}
	return true
}
