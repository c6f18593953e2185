package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The read of the Worker's claim batch is a statement of its own, after the
// claim, because a statement that joined the claim's outcome rows to
// docket_runs would read them in its own snapshot, taken before the claim
// function's first statement: a run committed while the claim waited for
// the policy row would be leased but missing from the join, and a run
// written meanwhile would be read in its older version. Here the claim
// waits for the policy row while a new run and a new document of an old run
// commit; LeasedRuns, whose snapshot follows the claim, must read both as
// they are. The writes are made in the transaction that holds the policy
// row, so they commit at the instant the claim's wait ends. The engine
// bounds its policy wait (250 ms), which a loaded machine can make the one
// commit between the observed wait and its end exceed; such a claim is
// refused cleanly, and the scenario repeats on a fresh database.
func TestClaimBatchReadsRunsCommittedWhileTheClaimWaited(t *testing.T) {
	t.Parallel()
	const maxAttempts = 20
	for attempt := 1; ; attempt++ {
		if attempt > maxAttempts {
			t.Fatalf("the claim never waited out the policy lock in %d attempts", maxAttempts)
		}
		if waitedClaimReads(t) {
			return
		}
	}
}

// waitedClaimReads runs the scenario of
// TestClaimBatchReadsRunsCommittedWhileTheClaimWaited once and reports
// false when the claim timed out waiting for the policy row.
func waitedClaimReads(t *testing.T) bool {
	t.Helper()
	ctx := testkit.Context(t)
	pool := testkit.PoolFor(t, pgtest.NewDatabase(t))
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	newRun := func(runID, tenant, state string) docket.NewRun {
		return docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: "g", GraphHash: "h", State: json.RawMessage(state)}
	}
	if _, err := client.InsertRun(ctx, newRun("old", "a", `{"v": 1}`)); err != nil {
		t.Fatalf("insert old: %v", err)
	}

	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Rollback(context.Background()) }()
	execTx(t, holder, `select 1 from docket_claim_policy where id = 1 for update`)
	if _, err := client.InsertRunTx(ctx, holder, newRun("new", "b", `{"v": 2}`)); err != nil {
		t.Fatalf("insert new: %v", err)
	}
	execTx(t, holder, `update docket_runs set state = '{"v": 3}' where run_id = 'old'`)

	// Due: the runs inserted take wake_at = now() at their insert.
	now := time.Now().Add(time.Minute)
	batch := &pgx.Batch{}
	batch.Queue(dbgen.TenantFairClaimCombinedNoted, now, now.Add(-testkit.ClaimTTL), int32(10), int32(testkit.ClaimMaxAttempts), nil)
	batch.Queue(dbgen.LeasedRuns)
	results := pool.SendBatch(ctx, batch)
	defer func() { _ = results.Close() }()
	if err := testkit.AwaitActivity(ctx, pool, `exists (select 1 from pg_stat_activity
			where wait_event_type = 'Lock' and query like '%TenantFairClaimCombinedNoted%')`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	claimRows, err := results.Query()
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	rows, err := pgx.CollectRows(claimRows, pgx.RowToStructByPos[dbgen.TenantFairClaimCombinedNotedRow])
	if err != nil {
		t.Fatalf("claim rows: %v", err)
	}
	leasedRows, err := results.Query()
	if err != nil {
		t.Fatalf("leased runs: %v", err)
	}
	read, err := pgx.CollectRows(leasedRows, pgx.RowToStructByPos[dbgen.LeasedRunsRow])
	if err != nil {
		t.Fatalf("leased runs rows: %v", err)
	}
	if err := results.Close(); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if len(rows) == 1 && rows[0].RowKind != nil && *rows[0].RowKind == "error" &&
		rows[0].ErrorReason != nil && *rows[0].ErrorReason == "lock_contention" {
		return false
	}

	leased := map[string]string{}
	for _, r := range rows {
		if r.RowKind == nil || *r.RowKind != "outcome" || r.ClaimToken == nil {
			t.Fatalf("claim row %+v, want leases only", r)
		}
		leased[*r.RunID] = r.ClaimToken.String()
	}
	got := map[string]string{}
	for _, r := range read {
		if r.ClaimToken == nil || leased[r.RunID] != r.ClaimToken.String() {
			t.Fatalf("read %s with claim token %v, not its lease's", r.RunID, r.ClaimToken)
		}
		got[r.RunID] = string(r.State)
	}
	want := map[string]string{"old": `{"v": 3}`, "new": `{"v": 2}`}
	if len(leased) != len(want) || !maps.Equal(got, want) {
		t.Fatalf("leased %v and read %v, want both runs read as committed: %v", leased, got, want)
	}
	return true
}

// execTx runs sql in tx, failing the test on an error.
func execTx(t testing.TB, tx pgx.Tx, sql string) {
	t.Helper()
	if _, err := tx.Exec(testkit.Context(t), sql); err != nil {
		t.Fatal(fmt.Errorf("%s: %w", sql, err))
	}
}
