package migration

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// guardIntegrityViolation is SQLSTATE 23000, raised by every ring guard.
const guardIntegrityViolation = "23000"

// guardExpectRefused runs sql and requires SQLSTATE 23000 with no change.
func guardExpectRefused(t testing.TB, pool *pgxpool.Pool, sql string) {
	t.Helper()
	before := testkit.GuardState(t, pool)
	_, err := pool.Exec(testkit.Context(t), sql)
	if code := testkit.GuardSQLState(err); code != guardIntegrityViolation {
		t.Fatalf("%s: error %v (SQLSTATE %q), want SQLSTATE %s", sql, err, code, guardIntegrityViolation)
	}
	if after := testkit.GuardState(t, pool); after != before {
		t.Fatalf("%s was refused but changed state:\nbefore %s\nafter  %s", sql, before, after)
	}
}

func TestSchemaGuardsRefuseAndChangeNothing(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.MigrationInsertRuns(t, pool,
		testkit.MigrationRun{RunID: "g1", Tenant: "guarded", Shape: "ready"},
		testkit.MigrationRun{RunID: "g2", Tenant: "guarded", Shape: "waiting"},
		testkit.MigrationRun{RunID: "g3", Tenant: "guarded", Shape: "done"},
		testkit.MigrationRun{RunID: "f1", Tenant: "finished", Shape: "done"},
	)
	for _, sql := range []string{
		`update docket_claim_schedule set unfinished_count = 5 where scope_key = 'guarded'`,
		`update docket_claim_schedule set unfinished_count = unfinished_count - 1 where scope_key = 'guarded'`,
		`update docket_claim_schedule set unfinished_count = 0 where scope_key = 'guarded'`,
		`update docket_claim_schedule set scope_key = 'elsewhere' where scope_key = 'guarded'`,
		`update docket_claim_schedule set ring_position = default where scope_key = 'guarded'`,
		`insert into docket_claim_schedule (scope_key) values ('orphan')`,
		`delete from docket_claim_schedule where scope_key = 'guarded'`,
		`update docket_claim_partitions set scope_key = 'elsewhere' where scope_key = 'guarded'`,
		`delete from docket_claim_partitions where scope_key = 'guarded'`,
		// Only terminal runs left: the partition still owns runs.
		`delete from docket_claim_partitions where scope_key = 'finished'`,
		`truncate docket_runs`,
		`truncate docket_claim_schedule`,
		`truncate docket_claim_partitions cascade`,
		`update docket_runs set tenant_id = 'other' where run_id = 'g1'`,
		`update docket_runs set tenant_id = null where run_id = 'g2'`,
		`update docket_runs set tenant_id = 'other' where run_id = 'g3'`,
	} {
		guardExpectRefused(t, pool, sql)
	}
	if got := testkit.QueryInt64(t, pool, `select unfinished_count from docket_claim_schedule where scope_key = 'guarded'`); got != 2 {
		t.Fatalf("unfinished_count of guarded = %d, want 2", got)
	}

	// The guards are not blanket refusals: a partition that owns no runs at
	// all goes away with its zero-count schedule row.
	testkit.ExecSQL(t, pool, `insert into docket_claim_partitions (scope_key) values ('unused')`)
	testkit.ExecSQL(t, pool, `delete from docket_claim_partitions where scope_key = 'unused'`)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule where scope_key = 'unused'`); got != 0 {
		t.Fatalf("schedule rows of a deleted empty partition = %d, want 0", got)
	}
}

// TestSchemaGuardRefusesUnderflowOnTheTriggerPath desynchronizes the counter
// the only way left (a run written while triggers are disabled, which needs a
// superuser) and shows that the lifecycle triggers then refuse to go below
// zero instead of hiding the damage.
func TestSchemaGuardRefusesUnderflowOnTheTriggerPath(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.MigrationInsertRuns(t, pool, testkit.MigrationRun{RunID: "seen", Tenant: "drifted", Shape: "done"})
	ctx := testkit.Context(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, `set session_replication_role = replica;
		insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		values ('unseen', 'drifted', 'g', 'h1', '{}', 'running', now());
		set session_replication_role = origin`)
	conn.Release()
	if err != nil {
		t.Fatal(err)
	}
	if got := testkit.QueryInt64(t, pool, `select unfinished_count from docket_claim_schedule where scope_key = 'drifted'`); got != 0 {
		t.Fatalf("setup: unfinished_count = %d, want the uncounted 0", got)
	}
	guardExpectRefused(t, pool, `delete from docket_runs where run_id = 'unseen'`)
	guardExpectRefused(t, pool, `update docket_runs set status = 'done', wake_at = null, finished_at = now() where run_id = 'unseen'`)
}

// guardRingMismatches counts scopes whose unfinished_count differs from the
// real number of running and waiting runs, runs without a partition, and
// differences between the partial ring index and the positive counts.
const guardRingMismatches = `
with truth as (
	select p.scope_key,
	       (select count(*) from docket_runs r
	         where r.scope_key = p.scope_key and r.status in ('running', 'waiting')) as unfinished
	  from docket_claim_partitions p
)
select (select count(*) from truth t join docket_claim_schedule s using (scope_key)
         where s.unfinished_count <> t.unfinished)
     + (select count(*) from docket_claim_partitions p
         where not exists (select 1 from docket_claim_schedule s where s.scope_key = p.scope_key))
     + (select count(*) from docket_runs r
         where not exists (select 1 from docket_claim_partitions p where p.scope_key = r.scope_key))
     + (select count(*) from (
          (select s.ring_position from docket_claim_schedule s where s.unfinished_count > 0
           except
           select s.ring_position from docket_claim_schedule s join truth t using (scope_key) where t.unfinished > 0)
          union all
          (select s.ring_position from docket_claim_schedule s join truth t using (scope_key) where t.unfinished > 0
           except
           select s.ring_position from docket_claim_schedule s where s.unfinished_count > 0)) d)`

// guardRingIndexed lists the ring through the partial index only.
func guardRingIndexed(t testing.TB, pool *pgxpool.Pool) []int64 {
	t.Helper()
	var ring []int64
	err := pgx.BeginFunc(testkit.Context(t), pool, func(tx pgx.Tx) error {
		ctx := testkit.Context(t)
		if _, err := tx.Exec(ctx, `set local enable_seqscan = off; set local enable_bitmapscan = off`); err != nil {
			return err
		}
		planRows, err := tx.Query(ctx, `explain select ring_position from docket_claim_schedule where in_ring order by ring_position`)
		if err != nil {
			return err
		}
		plan, err := pgx.CollectRows(planRows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `select ring_position from docket_claim_schedule where in_ring order by ring_position`)
		if err != nil {
			return err
		}
		ring, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if want := "docket_claim_schedule_ring_idx"; !strings.Contains(strings.Join(plan, "\n"), want) {
			return fmt.Errorf("ring query plan %q does not use %s", plan, want)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ring through its index: %v", err)
	}
	return ring
}

// guardStatusUpdates move one run to a status with every row check satisfied.
var guardStatusUpdates = map[string]string{
	"running":   `status = 'running', wake_at = now(), claim_token = null, claimed_at = null, poisoned_at = null, poison_reason = null, finished_at = null, tenant_admitted_at = null`,
	"claimed":   `status = 'running', wake_at = null, claim_token = gen_random_uuid(), claimed_at = now(), poisoned_at = null, poison_reason = null, finished_at = null, tenant_admitted_at = null`,
	"waiting":   `status = 'waiting', wake_at = null, claim_token = null, claimed_at = null, poisoned_at = null, poison_reason = null, finished_at = null, tenant_admitted_at = null`,
	"done":      `status = 'done', wake_at = null, claim_token = null, claimed_at = null, poisoned_at = null, poison_reason = null, finished_at = now(), tenant_admitted_at = null`,
	"failed":    `status = 'failed', wake_at = null, claim_token = null, claimed_at = null, poisoned_at = null, poison_reason = null, finished_at = now(), tenant_admitted_at = null`,
	"cancelled": `status = 'cancelled', wake_at = null, claim_token = null, claimed_at = null, poisoned_at = null, poison_reason = null, finished_at = now(), tenant_admitted_at = null`,
}

// TestSchemaRingCounterProperty applies random committed and rolled-back
// transactions of inserts (single and bulk), status changes and deletes
// across five scopes, and checks after each one that every unfinished_count
// is exact and the partial ring index holds exactly the positive rows.
func TestSchemaRingCounterProperty(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	scopes := []string{"p1", "p2", "p3", "p4", ""}
	shapes := []string{"ready", "future", "claimed", "waiting", "poisoned", "done", "failed", "cancelled"}
	statuses := []string{"running", "claimed", "waiting", "done", "failed", "cancelled"}
	serial := 0
	rapid.Check(t, func(rt *rapid.T) {
		ctx := testkit.Context(t)
		tx, err := pool.Begin(ctx)
		if err != nil {
			rt.Fatal(err)
		}
		defer tx.Rollback(ctx)
		for op := range rapid.IntRange(1, 4).Draw(rt, "ops") {
			scope := rapid.SampledFrom(scopes).Draw(rt, fmt.Sprintf("scope%d", op))
			var tenant *string
			if scope != "" {
				tenant = &scope
			}
			var sql string
			var args []any
			switch rapid.IntRange(0, 5).Draw(rt, fmt.Sprintf("kind%d", op)) {
			case 0, 1:
				shape := rapid.SampledFrom(shapes).Draw(rt, fmt.Sprintf("shape%d", op))
				n := rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("count%d", op))
				serial++
				sql = `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state,
					status, wake_at, claim_token, claimed_at, poisoned_at, poison_reason, finished_at)
					select 'prop-' || $1::int || '-' || i, $2, 'g', 'h1', '{}', ` + testkit.MigrationRunShapes[shape] +
					` from generate_series(1, $3::int) i`
				args = []any{serial, tenant, n}
			case 2, 3:
				status := rapid.SampledFrom(statuses).Draw(rt, fmt.Sprintf("status%d", op))
				pick := rapid.IntRange(0, 50).Draw(rt, fmt.Sprintf("pick%d", op))
				sql = `update docket_runs set ` + guardStatusUpdates[status] + ` where id = (
					select id from docket_runs where scope_key = $1 order by id
					offset $2::int % greatest((select count(*) from docket_runs where scope_key = $1), 1) limit 1)`
				args = []any{scope, pick}
			case 4:
				pick := rapid.IntRange(0, 50).Draw(rt, fmt.Sprintf("pick%d", op))
				sql = `delete from docket_runs where id = (
					select id from docket_runs where scope_key = $1 order by id
					offset $2::int % greatest((select count(*) from docket_runs where scope_key = $1), 1) limit 1)`
				args = []any{scope, pick}
			default:
				status := rapid.SampledFrom(statuses).Draw(rt, fmt.Sprintf("status%d", op))
				sql = `update docket_runs set ` + guardStatusUpdates[status] + ` where scope_key = $1`
				args = []any{scope}
			}
			if _, err := tx.Exec(ctx, sql, args...); err != nil {
				rt.Fatalf("%s %v: %v", sql, args, err)
			}
		}
		if rapid.Bool().Draw(rt, "commit") {
			if err := tx.Commit(ctx); err != nil {
				rt.Fatalf("commit: %v", err)
			}
		} else if err := tx.Rollback(ctx); err != nil {
			rt.Fatalf("rollback: %v", err)
		}
		if n := testkit.QueryInt64(t, pool, guardRingMismatches); n != 0 {
			rt.Fatalf("%d ring mismatches after this transaction; schedule %+v", n, testkit.MigrationSchedule(t, pool))
		}
		indexed := guardRingIndexed(t, pool)
		var positive []int64
		for _, s := range testkit.MigrationSchedule(t, pool) {
			if s.Unfinished > 0 {
				positive = append(positive, s.Position)
			}
		}
		if fmt.Sprint(indexed) != fmt.Sprint(positive) {
			rt.Fatalf("ring through the index %v, positive rows %v", indexed, positive)
		}
	})
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs`); got == 0 {
		t.Fatal("the property run committed no runs at all")
	}
}

// TestScheduleIndexesLeaveTheCountOut: every insert and finish updates its
// scope's unfinished_count, and PostgreSQL writes that update as heap-only,
// with no new index entries, only when no index of docket_claim_schedule
// names the column, in its keys, expressions or predicate. The ring indexes
// name in_ring, which PostgreSQL keeps as the count's sign, instead.
func TestScheduleIndexesLeaveTheCountOut(t *testing.T) {
	t.Parallel()
	catalog := testkit.MigrationCatalog(t, testkit.NewPool(t), "public")
	var ring []string
	column := ""
	for _, entry := range catalog {
		if def, ok := strings.CutPrefix(entry, "column docket_claim_schedule.in_ring "); ok {
			column = def
		}
		rest, ok := strings.CutPrefix(entry, "index ")
		name, def, _ := strings.Cut(rest, " ")
		if !ok || !strings.Contains(def, " ON SCHEMA.docket_claim_schedule ") {
			continue
		}
		if strings.Contains(def, "unfinished_count") {
			t.Errorf("%s names unfinished_count, so every update of the count writes index entries: %s", name, def)
		}
		if strings.Contains(strings.ReplaceAll(def, "(", ""), "WHERE in_ring") {
			ring = append(ring, name)
		}
	}
	if want := []string{"docket_claim_schedule_awake_idx", "docket_claim_schedule_ring_idx"}; !slices.Equal(ring, want) {
		t.Errorf("indexes over the ring %v, want %v", ring, want)
	}
	if want := "boolean notnull=true generated=s identity= default=(unfinished_count > 0)"; column != want {
		t.Errorf("in_ring is %q, want the stored generated column %q", column, want)
	}
}
