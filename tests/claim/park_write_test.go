package claim

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Park on write and park on switch-on (docs/fairness-parked.md, rules 2 and
// 5). The database clock is now; testkit.ClaimBase lies years after it, so a
// run due at ClaimBase is not due for the database.

// parkInsertSQL inserts one running run of tenant due at $3.
const parkInsertSQL = `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
	values ($1, $2, 'g', 'h1', 'running', '{}', $3)`

func TestParkOnInsert(t *testing.T) {
	t.Parallel()
	later := testkit.ClaimBase.Add(24 * time.Hour)
	t.Run("empty_partition_future_run", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		e.Due("a", "a-1", later)
		e.ExpectPark("a", testkit.ParkedUntil(later))
		// A batch into an empty partition parks until its earliest run.
		testkit.ExecSQL(t, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
			values ('b-1', 'b', 'g', 'h1', 'running', '{}', $1), ('b-2', 'b', 'g', 'h1', 'running', '{}', $2)`,
			later, later.Add(-time.Hour))
		e.ExpectPark("b", testkit.ParkedUntil(later.Add(-time.Hour)))
		testkit.ParkExpectInvariant(t, e.Pool)
	})
	t.Run("empty_partition_waiting_run", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		e.Waiting("a", "a-wait")
		e.ExpectPark("a", testkit.ParkedForGood)
	})
	t.Run("empty_partition_due_run", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		e.Due("a", "a-due", parkDue())
		e.ExpectPark("a", testkit.Awake)
		// Due and later in one statement: awake.
		testkit.ExecSQL(t, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
			values ('b-1', 'b', 'g', 'h1', 'running', '{}', $1), ('b-2', 'b', 'g', 'h1', 'running', '{}', $2)`,
			later, parkDue())
		e.ExpectPark("b", testkit.Awake)
	})
	t.Run("non_empty_partition_unchanged", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		e.Due("a", "a-due", parkDue())
		e.Due("a", "a-later", later)
		e.ExpectPark("a", testkit.Awake)
		// A parked partition that receives later work keeps the earlier time.
		e.Due("b", "b-1", later)
		e.Due("b", "b-2", later.Add(time.Hour))
		e.ExpectPark("b", testkit.ParkedUntil(later))
		e.Waiting("b", "b-wait")
		e.ExpectPark("b", testkit.ParkedUntil(later))
	})
	t.Run("paused_partition", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		ctx := testkit.Context(t)
		if _, err := e.Client.PauseTenant(ctx, docket.Tenant("a"), docket.ClaimPolicyWriteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.Due("a", "a-1", later)
		e.ExpectPark("a", testkit.Awake)
	})
	t.Run("parking_off", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimTenantFair(t, 10)
		e.Due("a", "a-1", later)
		e.Waiting("b", "b-wait")
		e.ExpectPark("a", testkit.Awake)
		e.ExpectPark("b", testkit.Awake)
	})
	t.Run("legacy", func(t *testing.T) {
		t.Parallel()
		pool := testkit.NewPool(t)
		testkit.OpenClient(t, pool, testkit.ParkedConfig(10))
		e := &testkit.ClaimEnv{T: t, Pool: pool, Client: testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}})}
		e.Due("a", "a-1", later)
		e.ExpectPark("a", testkit.Awake)
	})
}

func TestParkOnSwitchOn(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimTenantFair(t, 10)
	later := testkit.ClaimBase.Add(24 * time.Hour)
	e.Due("dormant", "dormant-1", later)
	e.Due("dormant", "dormant-2", later.Add(-time.Hour))
	e.Waiting("waiting", "waiting-1")
	e.Due("due", "due-1", parkDue())
	e.Claimed("claimed", "claimed-1", testkit.ClaimBase, true)
	e.Due("claimed", "claimed-later", later)
	e.Due("locked", "locked-1", later)
	e.Due("paused", "paused-1", later)
	ctx := testkit.Context(t)
	if _, err := e.Client.PauseTenant(ctx, docket.Tenant("paused"), docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}

	// A writer holds locked's schedule row: the batch skips it without
	// waiting, and the walk parks it later.
	writer := newParkWriter(t, e.Pool)
	if _, err := writer.tx.Exec(ctx, `update docket_claim_schedule set updated_at = now() where scope_key = 'locked'`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Client.PutClaimPolicyParking(ctx, true, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	writer.commit()
	e.ExpectPark("dormant", testkit.ParkedUntil(later.Add(-time.Hour)))
	e.ExpectPark("waiting", testkit.ParkedForGood)
	e.ExpectPark("due", testkit.Awake)
	e.ExpectPark("claimed", testkit.Awake)
	e.ExpectPark("paused", testkit.Awake)
	e.ExpectPark("locked", testkit.Awake)
	testkit.ParkExpectInvariant(t, e.Pool)

	// The walk: a grant of due, and locked parked by its visit.
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	visited := map[string]bool{}
	for _, in := range tr.Inspections {
		visited[in.ScopeKey] = true
		if in.ScopeKey == "locked" && !in.Parked {
			t.Fatalf("visit of locked %+v, want a park", in)
		}
	}
	if visited["dormant"] || visited["waiting"] {
		t.Fatalf("the walk visited a partition the switch parked: %+v", tr.Inspections)
	}
	testkit.ClaimExpectIDs(t, "first call", testkit.ClaimOutcomeIDs(tr), []string{"due-1"})
	if !visited["locked"] {
		tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	}
	e.ExpectPark("locked", testkit.ParkedUntil(later))
	testkit.ParkExpectInvariant(t, e.Pool)
}

// TestParkOnInsertRaces stages the writes that race a park on insert. Each
// holds or waits for p's schedule row, so they serialize on it: the one that
// commits second applies its write to the row the first left.
func TestParkOnInsertRaces(t *testing.T) {
	t.Parallel()
	later := testkit.ClaimBase.Add(24 * time.Hour)
	type race struct {
		name  string
		setup func(e *testkit.ClaimEnv)
		// first holds p's schedule row uncommitted; second blocks on it.
		first, second func(ctx context.Context, tx pgx.Tx) error
		want          testkit.ParkState
	}
	parkingInsert := func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, parkInsertSQL, "p-later", "p", later)
		return err
	}
	dueInsert := func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, parkInsertSQL, "p-due", "p", parkDue())
		return err
	}
	retry := func(ctx context.Context, tx pgx.Tx) error {
		_, err := dbgen.New(tx).RetryFinishedRun(ctx, dbgen.RetryFinishedRunParams{ID: parkRunID(ctx, tx, "p-failed")})
		return err
	}
	failedRun := func(e *testkit.ClaimEnv) {
		testkit.ExecSQL(t, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, finished_at)
			values ('p-failed', 'p', 'g', 'h1', 'failed', '{}', now())`)
	}
	races := []race{
		{name: "park_then_due_insert", first: parkingInsert, second: dueInsert, want: testkit.Awake},
		{name: "due_insert_then_insert", first: dueInsert, second: parkingInsert, want: testkit.Awake},
		{name: "park_then_retry", setup: failedRun, first: parkingInsert, second: retry, want: testkit.Awake},
		{name: "retry_then_insert", setup: failedRun, first: retry, second: parkingInsert, want: testkit.Awake},
		{name: "park_then_later_insert", first: parkingInsert, second: func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, parkInsertSQL, "p-earlier", "p", later.Add(-time.Hour))
			return err
		}, want: testkit.ParkedUntil(later.Add(-time.Hour))},
	}
	for _, r := range races {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			e := testkit.NewClaimParked(t, 10)
			// p's partition exists (and is empty) before the race.
			testkit.ExecSQL(t, e.Pool, `insert into docket_claim_partitions (scope_key) values ('p')`)
			if r.setup != nil {
				r.setup(e)
			}
			ctx := testkit.Context(t)
			first := newParkWriter(t, e.Pool)
			if err := r.first(ctx, first.tx); err != nil {
				t.Fatalf("first write: %v", err)
			}
			second := newParkWriter(t, e.Pool)
			done := make(chan error, 1)
			go func() { done <- r.second(ctx, second.tx) }()
			if err := parkAwaitBlocked(t, e, second.pid, done); err != nil {
				t.Fatal(err)
			}
			first.commit()
			if err := <-done; err != nil {
				t.Fatalf("second write: %v", err)
			}
			second.commit()
			e.ExpectPark("p", r.want)
			testkit.ParkExpectInvariant(t, e.Pool)
		})
	}
}

// TestParkOnInsertRacesParkingOff: a switch of parking off that commits
// before the insert reads the policy leaves the partition awake. One that
// commits while the insert is open cannot wait for it (the insert's
// partition is not even visible to it), so the partition stays parked after
// both commit; it is dormant until its parked_until, so no call of either
// walk loses work by it, and the next switch on finds it parked rightly.
func TestParkOnInsertRacesParkingOff(t *testing.T) {
	t.Parallel()
	later := testkit.ClaimBase.Add(24 * time.Hour)
	t.Run("off_first", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		ctx := testkit.Context(t)
		if _, err := e.Client.PutClaimPolicyParking(ctx, false, docket.ClaimPolicyWriteOptions{}); err != nil {
			t.Fatal(err)
		}
		e.Due("p", "p-later", later)
		e.ExpectPark("p", testkit.Awake)
	})
	t.Run("insert_open", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewClaimParked(t, 10)
		ctx := testkit.Context(t)
		writer := newParkWriter(t, e.Pool)
		if _, err := writer.tx.Exec(ctx, parkInsertSQL, "p-later", "p", later); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Client.PutClaimPolicyParking(ctx, false, docket.ClaimPolicyWriteOptions{}); err != nil {
			t.Fatal(err)
		}
		writer.commit()
		e.ExpectPark("p", testkit.ParkedUntil(later))
		testkit.ParkExpectInvariant(t, e.Pool)
		// The full-ring walk ignores parked_until: p is visited.
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		if len(tr.Inspections) == 0 || tr.Inspections[0].ScopeKey != "p" || tr.Inspections[0].Disposition != policy.DispositionEmptyPage {
			t.Fatalf("full-ring call %+v, want a visit of p", tr.Inspections)
		}
	})
}
