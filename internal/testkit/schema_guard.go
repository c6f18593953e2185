package testkit

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// GuardState renders the partitions, the schedule and the runs, so a refused
// statement can be shown to have changed nothing.
func GuardState(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	var state string
	err := pool.QueryRow(Context(t), `select
		coalesce((select string_agg(row(p.*)::text, ';' order by scope_key) from docket_claim_partitions p), '') || '|' ||
		coalesce((select string_agg(row(s.*)::text, ';' order by scope_key) from docket_claim_schedule s), '') || '|' ||
		coalesce((select string_agg(row(r.*)::text, ';' order by id) from docket_runs r), '')`).Scan(&state)
	if err != nil {
		t.Fatalf("guard state: %v", err)
	}
	return state
}

// GuardSQLState returns the SQLSTATE of err, or "" when it has none.
func GuardSQLState(err error) string {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code
	}
	return ""
}
