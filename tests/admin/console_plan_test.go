package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The keyset queries that must stay fast at any depth walk an index in
// order, with no sort: the scope order of the tenants page on the
// partitions' primary key, and the ring window on the positions' unique
// index, on a domain of 20,000 partitions.
func TestConsoleKeysetPlansUseIndexes(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	testkit.ExecSQL(t, pool, `insert into docket_claim_partitions (scope_key)
		select 't' || lpad(i::text, 6, '0') from generate_series(1, 20000) i`)
	testkit.ExecSQL(t, pool, `analyze`)
	for _, tc := range []struct {
		name, sql string
		args      []any
		index     string
	}{
		{"tenants by scope", gen.ConsoleTenantsByScope, []any{"t019000", nil, nil, 51}, "docket_claim_partitions_pkey"},
		{"tenants by scope, filtered", gen.ConsoleTenantsByScope, []any{"t019000", "t01", "empty", 51}, "docket_claim_partitions_pkey"},
		{"ring window", gen.ConsoleRingWindow, []any{19000, 51}, "docket_claim_schedule_ring_position_key"},
		{"ring start", gen.ConsoleRingStart, []any{19000, 51}, "docket_claim_schedule_ring_position_key"},
	} {
		var plan string
		if err := pool.QueryRow(testkit.Context(t), "explain (format json) "+tc.sql, tc.args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		nodes := testkit.PlanNodes(t, plan)
		joined := strings.Join(nodes, ", ")
		if !strings.Contains(joined, "Scan on "+tc.index) || strings.Contains(joined, "Sort") || strings.Contains(joined, "Seq Scan on docket_claim_partitions") ||
			strings.Contains(joined, "Seq Scan on docket_claim_schedule") {
			t.Errorf("%s: plan %s", tc.name, joined)
		}
	}
}

// The tenants page's per-scope extras read a page's scopes only, each on
// its scope's indexes: the failed count on docket_runs_list_idx and the
// queue's head on docket_runs_queued_ready_idx, never a scan of every run,
// on a domain of 20,000 runs over 2,000 scopes.
func TestConsoleTenantExtrasPlanUsesIndexes(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at, finished_at)
		select 'r' || i, 't' || lpad((i % 2000)::text, 6, '0'), 'g', 'h', '{}',
		       case when i % 3 = 0 then 'failed' else 'running' end,
		       case when i % 3 = 0 then null else now() - interval '1 minute' end,
		       case when i % 3 = 0 then now() end
		  from generate_series(1, 20000) i`)
	testkit.ExecSQL(t, pool, `analyze`)
	var plan string
	keys := []string{"t000001", "t000002", "t000003"}
	if err := pool.QueryRow(testkit.Context(t), "explain (format json) "+gen.ConsoleTenantExtras, keys).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(testkit.PlanNodes(t, plan), ", ")
	if !strings.Contains(joined, "Scan on docket_runs_list_idx") || !strings.Contains(joined, "Scan on docket_runs_queued_ready_idx") ||
		strings.Contains(joined, "Seq Scan on docket_runs") {
		t.Errorf("tenant extras: plan %s", joined)
	}
}

// A scope's admitted count reads the indexes of its two admitted pages, the
// unclaimed (docket_runs_admitted_ready_idx) and the claimed
// (docket_runs_admitted_claimed_idx), never a scan of every run: no index of
// admitted rows alone is kept (schema V22). On a domain of 20,000 runs over
// 2,000 scopes: run i belongs to scope i mod 2000, is admitted when i is a
// multiple of 3 and then claimed when i div 2000 is even.
func TestConsoleAdmittedCountsReadTheAdmittedPages(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at)
		select 'r' || i, 't' || lpad((i % 2000)::text, 6, '0'), 'g', 'h', '{}', 'running', now() - interval '1 minute'
		  from generate_series(1, 20000) i`)
	testkit.ExecSQL(t, pool, `update docket_runs set tenant_admitted_at = now()
		where substr(run_id, 2)::integer % 3 = 0`)
	testkit.ExecSQL(t, pool, `update docket_runs set claim_token = gen_random_uuid(), claimed_at = now(), wake_at = null
		where substr(run_id, 2)::integer % 3 = 0 and (substr(run_id, 2)::integer / 2000) % 2 = 0`)
	testkit.ExecSQL(t, pool, `analyze`)
	keys := []string{"t000001", "t000002", "t000003"}
	for _, tc := range []struct {
		name, sql string
		args      []any
	}{
		{"inspect a scope", gen.InspectClaimScope, []any{"t000001"}},
		{"last grants of a page", gen.ConsoleLastGrants, []any{keys}},
		{"tenants by unfinished, capped", gen.ConsoleTenantsByUnfinished, []any{"t001000", int64(5), nil, "capped", 51}},
		{"tenants by scope, capped", gen.ConsoleTenantsByScope, []any{"t001000", nil, "capped", 51}},
	} {
		var plan string
		if err := pool.QueryRow(testkit.Context(t), "explain (format json) "+tc.sql, tc.args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		joined := strings.Join(testkit.PlanNodes(t, plan), ", ")
		if !strings.Contains(joined, "Scan on docket_runs_admitted_ready_idx") ||
			!strings.Contains(joined, "Scan on docket_runs_admitted_claimed_idx") ||
			strings.Contains(joined, "Seq Scan on docket_runs") {
			t.Errorf("%s: plan %s", tc.name, joined)
		}
	}
	// Scope t000003 holds runs 3 + 2000k for k = 0..9: admitted for k = 0,
	// 3, 6 and 9, claimed for the even ones of those, 0 and 6.
	got, err := gen.New(pool).InspectClaimScope(testkit.Context(t), "t000003")
	if err != nil {
		t.Fatal(err)
	}
	if got.Admitted != 4 || got.AdmittedClaimed != 2 || got.AdmittedReady != 2 || got.Queued != 6 {
		t.Fatalf("t000003: admitted %d, claimed %d, ready %d, queued %d; want 4, 2, 2, 6",
			got.Admitted, got.AdmittedClaimed, got.AdmittedReady, got.Queued)
	}
}
