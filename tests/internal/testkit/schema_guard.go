package testkit

import (
	"testing"

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
