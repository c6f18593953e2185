package claim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The races of a park (docs/fairness-parked.md, "Wake by write"). Tenant p
// at ring position 1 is dormant; one write makes a run of p eligible, racing
// a claim call whose visit to p would park it. Each write kind is staged at
// the three points that matter:
//
//   - held: the write is done but not committed, so it holds p's schedule
//     row; the park skips the locked row (no wait) and p stays awake.
//   - waiting: the claim has parked p and not committed; the write blocks on
//     the schedule row and, once the claim commits, unparks p.
//   - committed: the write commits after the visit's dormancy probe and
//     before the park locks the schedule row (the claim is paused inside
//     the visit's partition lock statement); the park's own snapshot, taken
//     after its lock, sees the write and does not park.
//
// In every case the next call serves the run the write made eligible.

// parkRaceWrite is one kind of write that can wake a dormant partition.
type parkRaceWrite struct {
	name string
	// setup gives p its dormant run, eligible the id of the run the write
	// makes eligible.
	setup    func(e *testkit.ClaimEnv)
	eligible string
	// write runs the write in tx, with the statement the library runs.
	write func(ctx context.Context, e *testkit.ClaimEnv, tx pgx.Tx) error
}

// parkDue is a wake time that is due for the database clock and for testkit.ClaimBase.
func parkDue() time.Time { return time.Now().Add(-time.Minute) }

var parkRaceWrites = []parkRaceWrite{
	{
		name:     "insert",
		setup:    func(e *testkit.ClaimEnv) { e.Due("p", "p-timer", testkit.ClaimBase.Add(24*time.Hour)) },
		eligible: "p-new",
		write: func(ctx context.Context, e *testkit.ClaimEnv, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
				values ('p-new', 'p', 'g', 'h1', 'running', '{}', $1)`, parkDue())
			return err
		},
	},
	{
		name:     "resume",
		setup:    func(e *testkit.ClaimEnv) { e.Waiting("p", "p-wait") },
		eligible: "p-wait",
		write: func(ctx context.Context, e *testkit.ClaimEnv, tx pgx.Tx) error {
			_, err := dbgen.New(tx).ApplyRunMutation(ctx, dbgen.ApplyRunMutationParams{
				Status: string(docket.StatusRunning), ID: parkRunID(ctx, tx, "p-wait")})
			return err
		},
	},
	{
		name:     "wake_at",
		setup:    func(e *testkit.ClaimEnv) { e.Due("p", "p-timer", testkit.ClaimBase.Add(24*time.Hour)) },
		eligible: "p-timer",
		write: func(ctx context.Context, e *testkit.ClaimEnv, tx pgx.Tx) error {
			due := parkDue()
			_, err := dbgen.New(tx).ApplyRunMutation(ctx, dbgen.ApplyRunMutationParams{
				Status: string(docket.StatusRunning), WakeAt: &due, ID: parkRunID(ctx, tx, "p-timer")})
			return err
		},
	},
	{
		name:     "retry_poisoned",
		setup:    func(e *testkit.ClaimEnv) { e.Poisoned("p", "p-poison") },
		eligible: "p-poison",
		write: func(ctx context.Context, e *testkit.ClaimEnv, tx pgx.Tx) error {
			_, err := dbgen.New(tx).RetryPoisonedRun(ctx, dbgen.RetryPoisonedRunParams{ScopeKey: "p", RunID: "p-poison"})
			return err
		},
	},
}

// parkRunID is the internal id of runID (-1 when missing, which updates no
// row and fails the test's later checks).
func parkRunID(ctx context.Context, tx pgx.Tx, runID string) int64 {
	id := int64(-1)
	_ = tx.QueryRow(ctx, `select id from docket_runs where run_id = $1`, runID).Scan(&id)
	return id
}

// newParkRace opens a parked-mode domain with p dormant at position 1 and q,
// with due work, at position 2.
func newParkRace(t *testing.T, w parkRaceWrite) *testkit.ClaimEnv {
	t.Helper()
	e := testkit.NewClaimWalkParked(t, 10)
	w.setup(e)
	e.DueMany("q", "q", 3, testkit.ClaimBase.Add(-time.Hour))
	if e.Position("p") != 1 || e.Position("q") != 2 {
		t.Fatalf("ring positions p %d, q %d; want 1 and 2", e.Position("p"), e.Position("q"))
	}
	return e
}

// parkExpectVisitedAwake checks a demand-one call that visited p without
// parking it and then granted q.
func parkExpectVisitedAwake(t *testing.T, e *testkit.ClaimEnv, tr docket.ClaimTrace) {
	t.Helper()
	if len(tr.Inspections) != 2 {
		t.Fatalf("inspections %+v, want p then q", tr.Inspections)
	}
	parkExpectVisit(t, tr.Inspections[0], "p", policy.DispositionEmptyPage, false, nil)
	parkExpectVisit(t, tr.Inspections[1], "q", policy.DispositionGrant, false, nil)
	e.ExpectPark("p", testkit.Awake)
}

// parkExpectServed checks that the next call, whose cursor is on q, wraps
// to p and serves the run the write made eligible.
func parkExpectServed(t *testing.T, e *testkit.ClaimEnv, w parkRaceWrite) {
	t.Helper()
	testkit.ParkExpectInvariant(t, e.Pool)
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "next call", testkit.ClaimOutcomeIDs(tr), []string{w.eligible})
	parkExpectVisit(t, tr.Inspections[0], "p", policy.DispositionGrant, false, nil)
	e.ExpectPark("p", testkit.Awake)
}

func TestParkedRaceWriterHoldsScheduleRow(t *testing.T) {
	t.Parallel()
	for _, w := range parkRaceWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			e := newParkRace(t, w)
			writer := newParkWriter(t, e.Pool)
			if err := w.write(testkit.Context(t), e, writer.tx); err != nil {
				t.Fatalf("write: %v", err)
			}
			// The claim neither waits for the writer nor parks p.
			parkExpectVisitedAwake(t, e, e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)))
			writer.commit()
			parkExpectServed(t, e, w)
		})
	}
}

func TestParkedRaceWriterWaitsForPark(t *testing.T) {
	t.Parallel()
	for _, w := range parkRaceWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			e := newParkRace(t, w)
			ctx := testkit.Context(t)
			claimTx, err := e.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer claimTx.Rollback(ctx)
			tr, err := e.Client.TraceClaimDueTx(ctx, claimTx, testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
			if err != nil {
				t.Fatal(err)
			}
			if len(tr.Inspections) != 2 || !tr.Inspections[0].Parked || tr.Inspections[0].ScopeKey != "p" {
				t.Fatalf("claim inspections %+v, want p parked, then q", tr.Inspections)
			}

			writer := newParkWriter(t, e.Pool)
			done := make(chan error, 1)
			go func() { done <- w.write(ctx, e, writer.tx) }()
			if err := parkAwaitBlocked(t, e, writer.pid, done); err != nil {
				t.Fatalf("write: %v", err)
			}
			if err := claimTx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("write: %v", err)
			}
			writer.commit()
			e.ExpectPark("p", testkit.Awake)
			parkExpectServed(t, e, w)
		})
	}
}

func TestParkedRaceWriterCommitsBeforeParkLock(t *testing.T) {
	t.Parallel()
	for _, w := range parkRaceWrites {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			e := newParkRace(t, w)
			pause := newParkPause(t, e, "p")
			tr := pause.claim(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone), func(ctx context.Context) {
				writer := newParkWriter(t, e.Pool)
				if err := w.write(ctx, e, writer.tx); err != nil {
					t.Fatalf("write during the pause: %v", err)
				}
				writer.commit()
			})
			parkExpectVisitedAwake(t, e, tr)
			parkExpectServed(t, e, w)
		})
	}
}

// parkPause is a parked-mode claim client whose first read of one
// partition row in a transaction (the visit's partition lock statement,
// before it locks the row) blocks on an advisory lock, installed as a
// test-only row level security policy like the stale tests' pause.
type parkPause struct {
	stalePause
}

// newParkPause installs the pause on tenant's partition row and opens the
// paused client as a role with the documented grants.
func newParkPause(t *testing.T, e *testkit.ClaimEnv, tenant string) *parkPause {
	t.Helper()
	var schema string
	if err := e.Pool.QueryRow(testkit.Context(t), `select current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	role, password := testkit.CreateRole(t, e.Pool)
	testkit.ApplyGrants(t, e.Pool, testkit.GrantsScript(t), schema, role, e.Pool.Config().ConnConfig.Database)
	pause := pgx.Identifier{schema, "docket_test_pause"}.Sanitize()
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`create function %s(p_scope text) returns boolean
		language plpgsql
		volatile
		set lock_timeout = '%ds'
		as $pause$
		declare
			v_reads integer;
		begin
			if p_scope = %s then
				v_reads := coalesce(nullif(current_setting('docket_test.target_reads', true), ''), '0')::integer + 1;
				perform set_config('docket_test.target_reads', v_reads::text, true);
				if v_reads = 1 then
					perform pg_advisory_lock_shared(%d);
					perform pg_advisory_unlock_shared(%d);
				end if;
			end if;
			return true;
		end;
		$pause$`, pause, int(staleWait/time.Second), quoteLiteral(tenant), staleAdvisoryKey, staleAdvisoryKey))
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`grant execute on function %s(text) to %s`, pause, pgx.Identifier{role}.Sanitize()))
	partitions := pgx.Identifier{schema, "docket_claim_partitions"}.Sanitize()
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`alter table %s enable row level security`, partitions))
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`create policy docket_test_pause on %s for all using (%s(scope_key)) with check (true)`,
		partitions, pause))
	app := testkit.RolePool(t, e.Pool.Config().ConnString(), role, password, schema)
	return &parkPause{stalePause{t: t, env: e, role: role, claimer: testkit.OpenClient(t, app, testkit.ParkedConfig(10))}}
}

// quoteLiteral quotes a test identifier as an SQL string literal.
func quoteLiteral(s string) string { return "'" + s + "'" }

// parkAwaitBlocked returns once the writer's backend pid waits on a lock.
// A write that ends without waiting is a failure of the wake rule (it did
// not write the parked schedule row): the test fails with what it returned.
func parkAwaitBlocked(t *testing.T, e *testkit.ClaimEnv, pid uint32, done chan error) error {
	t.Helper()
	ctx := testkit.Context(t)
	for {
		select {
		case err := <-done:
			t.Fatalf("the write ended without waiting for the parking call (err %v)", err)
		default:
		}
		var waiting bool
		if err := e.Pool.QueryRow(ctx, `select coalesce(wait_event_type = 'Lock', false) from pg_stat_activity where pid = $1`, pid).
			Scan(&waiting); err != nil {
			return err
		}
		if waiting {
			return nil
		}
		if _, err := e.Pool.Exec(ctx, "select pg_sleep(0.01)"); err != nil {
			return err
		}
	}
}

// TestParkedRaceLastRunFinishesBeforeParkLock: p's only run is claimed, so
// the visit's probe finds no page; while the claim is paused inside that
// statement, the holder commits the run's end, so p leaves the ring. The
// park, whose snapshot comes after that commit, must not park a partition
// that is no longer in the ring: p stays awake with no unfinished run, and
// its next run makes it a ring member as usual.
func TestParkedRaceLastRunFinishesBeforeParkLock(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	e.Due("p", "p-run", testkit.ClaimBase.Add(-time.Hour))
	res, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != "p-run" {
		t.Fatalf("lease of p-run: %+v, %v", res, err)
	}
	lease := res.Leases[0]
	pause := newParkPause(t, e, "p")
	tr := pause.claim(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone), func(ctx context.Context) {
		if _, err := e.Client.Commit(ctx, docket.CommitRequest{Holder: lease.Holder(), ExpectedSeq: lease.CheckpointSeq,
			Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
			t.Errorf("finish p-run during the pause: %v", err)
		}
	})
	if len(tr.Inspections) != 1 {
		t.Fatalf("inspections %+v, want the one visit of p", tr.Inspections)
	}
	parkExpectVisit(t, tr.Inspections[0], "p", policy.DispositionEmptyPage, false, nil)
	e.ExpectPark("p", testkit.Awake)
	if got := testkit.QueryInt64(t, e.Pool, `select unfinished_count from docket_claim_schedule where scope_key = 'p'`); got != 0 {
		t.Fatalf("p's unfinished count = %d, want 0", got)
	}
	testkit.ParkExpectInvariant(t, e.Pool)
}
