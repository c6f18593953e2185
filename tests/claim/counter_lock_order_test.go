package claim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// counterLockWait bounds each wait of the lock-order tests.
const counterLockWait = 10 * time.Second

// counterScopePairs are scope pairs written by one statement. With counters
// taken in an order that does not follow the scope order, at least one pair
// is taken second-first; each pair is checked.
var counterScopePairs = [][2]string{
	{"alpha", "beta"}, {"a", "b"}, {"north", "south"}, {"t-01", "t-02"}, {"x", "y"}, {"blue", "red"},
}

// counterBlocked waits until a statement of this test's database waits for
// a lock.
func counterBlocked(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	if err := testkit.AwaitActivity(testkit.Context(t), pool, `exists (
			select 1 from pg_stat_activity
			 where datname = current_database() and wait_event_type = 'Lock')`, counterLockWait); err != nil {
		t.Fatalf("no statement waited for a counter lock: %v", err)
	}
}

// counterLockInOrder holds the first scope's counter, starts write (which
// touches both scopes' counters in one statement), waits until it blocks,
// then takes the second scope's counter as a writer in scope order would.
// A write that took the second counter first would now deadlock with the
// holder; a write in scope order holds nothing yet, so both go through.
func counterLockInOrder(t *testing.T, pool *pgxpool.Pool, first, second string, write func(context.Context) error) {
	t.Helper()
	ctx := testkit.Context(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	// A failed check must not leave the write waiting for the holder.
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, `set local lock_timeout = '10s'`); err != nil {
		t.Fatalf("lock timeout: %v", err)
	}
	if _, err := tx.Exec(ctx, `select from docket_claim_schedule where scope_key = $1 for no key update`, first); err != nil {
		t.Fatalf("hold %s's counter: %v", first, err)
	}
	done := make(chan error, 1)
	go func() { done <- write(ctx) }()
	counterBlocked(t, pool)
	if _, err := tx.Exec(ctx, `select from docket_claim_schedule where scope_key = $1 for no key update`, second); err != nil {
		t.Fatalf("take %s's counter after %s's while the write waits: %v", second, first, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit the holder: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("write over %s and %s: %v", first, second, err)
		}
	case <-time.After(counterLockWait):
		t.Fatalf("write over %s and %s did not finish", first, second)
	}
}

// counterRace runs the interleaving of counterLockInOrder once per scope
// pair: prepare puts the pair's runs in place, write is the statement under
// test, and afterwards each scope's unfinished_count must be want.
func counterRace(t *testing.T, pool *pgxpool.Pool, want int64,
	prepare func(first, second string) (write func(ctx context.Context) error)) {
	t.Helper()
	for _, pair := range counterScopePairs {
		first, second := pair[0], pair[1]
		counterLockInOrder(t, pool, first, second, prepare(first, second))
		for _, scope := range pair {
			if got := testkit.QueryInt64(t, pool, `select unfinished_count from docket_claim_schedule where scope_key = $1`, scope); got != want {
				t.Errorf("%s: unfinished_count %d, want %d", scope, got, want)
			}
		}
	}
}

// counterRun is a new run of scope.
func counterRun(scope, runID string) docket.NewRun {
	return docket.NewRun{RunID: runID, Scope: docket.Tenant(scope), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}
}

// counterSeed inserts runs one statement each.
func counterSeed(t *testing.T, client *docket.Client, runs ...docket.NewRun) {
	t.Helper()
	for _, run := range runs {
		if _, err := client.InsertRun(testkit.Context(t), run); err != nil {
			t.Fatalf("seed %s: %v", run.RunID, err)
		}
	}
}

// TestInsertRunsTakesCountersInScopeOrder inserts one run into each scope
// of a pair with one InsertRuns while another transaction holds the first
// scope's counter and then takes the second's: the batch insert must not
// deadlock with it, and the counters end exact.
func TestInsertRunsTakesCountersInScopeOrder(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	counterRace(t, pool, 2, func(first, second string) func(context.Context) error {
		counterSeed(t, client, counterRun(first, first+"-seed"), counterRun(second, second+"-seed"))
		return func(ctx context.Context) error {
			_, err := client.InsertRuns(ctx, []docket.NewRun{counterRun(second, second+"-batch"), counterRun(first, first+"-batch")})
			return err
		}
	})
}

// TestDeleteOfRunsTakesCountersInScopeOrder deletes one unfinished run of
// each scope of a pair with one statement under the same interleaving.
func TestDeleteOfRunsTakesCountersInScopeOrder(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	counterRace(t, pool, 1, func(first, second string) func(context.Context) error {
		counterSeed(t, client, counterRun(first, first+"-kept"), counterRun(first, first+"-gone"),
			counterRun(second, second+"-kept"), counterRun(second, second+"-gone"))
		return func(ctx context.Context) error {
			tag, err := pool.Exec(ctx, `delete from docket_runs where run_id = any ($1)`,
				[]string{second + "-gone", first + "-gone"})
			if err == nil && tag.RowsAffected() != 2 {
				err = fmt.Errorf("deleted %d runs, want 2", tag.RowsAffected())
			}
			return err
		}
	})
}

// TestBatchCommitTakesCountersInScopeOrder finishes one claimed run of each
// scope of a pair with the worker's set-based commit, listed second scope
// first, under the same interleaving.
func TestBatchCommitTakesCountersInScopeOrder(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	counterRace(t, pool, 0, func(first, second string) func(context.Context) error {
		counterSeed(t, client, counterRun(first, first+"-run"), counterRun(second, second+"-run"))
		res, err := client.ClaimDue(testkit.Context(t), docket.ClaimRequest{Now: time.Now(), Limit: 2, ClaimTTL: time.Minute, MaxClaimAttempts: 5})
		if err != nil || len(res.Leases) != 2 {
			t.Fatalf("claim both runs: %d leases, %v", len(res.Leases), err)
		}
		var batch dbgen.CommitRunsParams
		for _, scope := range []string{second, first} {
			for _, lease := range res.Leases {
				if lease.RunID != scope+"-run" {
					continue
				}
				batch.ScopeKeys = append(batch.ScopeKeys, scope)
				batch.RunIds = append(batch.RunIds, lease.RunID)
				batch.ClaimTokens = append(batch.ClaimTokens, lease.Holder().Token.String())
				batch.ExpectedSeqs = append(batch.ExpectedSeqs, lease.CheckpointSeq)
				batch.Steps = append(batch.Steps, 0)
				batch.States = append(batch.States, "")
				batch.CheckpointTypes = append(batch.CheckpointTypes, "complete")
				batch.Statuses = append(batch.Statuses, "done")
				batch.Schedules = append(batch.Schedules, "terminal")
				batch.WakeAts = append(batch.WakeAts, time.Time{})
			}
		}
		return func(ctx context.Context) error {
			rows, err := dbgen.New(pool).CommitRuns(ctx, batch)
			if err == nil && len(rows) != 2 {
				err = fmt.Errorf("committed %d runs, want 2", len(rows))
			}
			return err
		}
	})
}
