package testkit

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RetryFinish makes runID terminal with status at finishedAt using plain SQL,
// clearing claim, wake time and marker as every terminal write does.
func RetryFinish(t testing.TB, pool *pgxpool.Pool, runID, status string, finishedAt time.Time) {
	t.Helper()
	ExecSQL(t, pool, `update docket_runs
		   set status = $2, finished_at = $3, claim_token = null, claimed_at = null,
		       wake_at = null, tenant_admitted_at = null, poisoned_at = null, poison_reason = null
		 where run_id = $1`, runID, status, finishedAt)
}

// RetryRingRow is one schedule row as the ring sees it, with the partition's
// versions.
type RetryRingRow struct {
	Scope      string
	Position   int64
	Unfinished int64
	Version    int64
	Epoch      int64
}

// RetryRing reads every partition with its ring row, in ring order.
func RetryRing(t testing.TB, pool *pgxpool.Pool) []RetryRingRow {
	t.Helper()
	rows, err := pool.Query(Context(t), `
		select p.scope_key, s.ring_position, s.unfinished_count, p.partition_version, p.admission_epoch
		  from docket_claim_partitions p join docket_claim_schedule s using (scope_key)
		 order by s.ring_position`)
	if err != nil {
		t.Fatalf("read ring: %v", err)
	}
	defer rows.Close()
	var ring []RetryRingRow
	for rows.Next() {
		var r RetryRingRow
		if err := rows.Scan(&r.Scope, &r.Position, &r.Unfinished, &r.Version, &r.Epoch); err != nil {
			t.Fatalf("scan ring: %v", err)
		}
		ring = append(ring, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read ring: %v", err)
	}
	return ring
}

// RetryExpectRing fails unless the ring is exactly want and every
// unfinished_count equals its scope's running and waiting runs.
func RetryExpectRing(t testing.TB, pool *pgxpool.Pool, want []RetryRingRow) {
	t.Helper()
	if got := RetryRing(t, pool); !slices.Equal(got, want) {
		t.Fatalf("ring:\n got  %+v\n want %+v", got, want)
	}
	drift := QueryInt64(t, pool, `
		select count(*) from docket_claim_schedule s
		 where s.unfinished_count <> (select count(*) from docket_runs r
		                               where r.scope_key = s.scope_key and r.status in ('running', 'waiting'))`)
	if drift != 0 {
		t.Fatalf("%d schedule rows have an unfinished_count that differs from their runs", drift)
	}
}

// RetryRunIDs lists the run ids in docket_runs, sorted.
func RetryRunIDs(t testing.TB, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(Context(t), `select run_id from docket_runs order by run_id`)
	if err != nil {
		t.Fatalf("list runs: %v", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatalf("scan run id: %v", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("list runs: %v", err)
	}
	return ids
}
