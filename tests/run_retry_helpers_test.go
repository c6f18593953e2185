package tests

import (
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Helpers of the retry and retention tests.

// rtFinish makes runID terminal with status at finishedAt using plain SQL,
// clearing claim, wake time and marker as every terminal write does.
func rtFinish(t testing.TB, pool *pgxpool.Pool, runID, status string, finishedAt time.Time) {
	t.Helper()
	execSQL(t, pool, `update docket_runs
		   set status = $2, finished_at = $3, claim_token = null, claimed_at = null,
		       wake_at = null, tenant_admitted_at = null, poisoned_at = null, poison_reason = null
		 where run_id = $1`, runID, status, finishedAt)
}

// rtRingRow is one schedule row as the ring sees it, with the partition's
// versions.
type rtRingRow struct {
	Scope      string
	Position   int64
	Unfinished int64
	Version    int64
	Epoch      int64
}

// rtRing reads every partition with its ring row, in ring order.
func rtRing(t testing.TB, pool *pgxpool.Pool) []rtRingRow {
	t.Helper()
	rows, err := pool.Query(testContext(t), `
		select p.scope_key, s.ring_position, s.unfinished_count, p.partition_version, p.admission_epoch
		  from docket_claim_partitions p join docket_claim_schedule s using (scope_key)
		 order by s.ring_position`)
	if err != nil {
		t.Fatalf("read ring: %v", err)
	}
	defer rows.Close()
	var ring []rtRingRow
	for rows.Next() {
		var r rtRingRow
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

// rtExpectRing fails unless the ring is exactly want and every
// unfinished_count equals its scope's running and waiting runs.
func rtExpectRing(t testing.TB, pool *pgxpool.Pool, want []rtRingRow) {
	t.Helper()
	if got := rtRing(t, pool); !slices.Equal(got, want) {
		t.Fatalf("ring:\n got  %+v\n want %+v", got, want)
	}
	drift := queryInt64(t, pool, `
		select count(*) from docket_claim_schedule s
		 where s.unfinished_count <> (select count(*) from docket_runs r
		                               where r.scope_key = s.scope_key and r.status in ('running', 'waiting'))`)
	if drift != 0 {
		t.Fatalf("%d schedule rows have an unfinished_count that differs from their runs", drift)
	}
}

// rtWithUnfinished returns ring with scope's unfinished count set to n.
func rtWithUnfinished(ring []rtRingRow, scope string, n int64) []rtRingRow {
	out := slices.Clone(ring)
	for i := range out {
		if out[i].Scope == scope {
			out[i].Unfinished = n
		}
	}
	return out
}

// rtRunIDs lists the run ids in docket_runs, sorted.
func rtRunIDs(t testing.TB, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(testContext(t), `select run_id from docket_runs order by run_id`)
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
