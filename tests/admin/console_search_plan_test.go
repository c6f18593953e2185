package admin

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The run id search reads a range of docket_runs_run_id_prefix_idx and the
// queued listings the ready indexes, never a scan of every run, in the
// custom plans of a statement's first executions and in the generic plan a
// cached statement may settle on alike, on a domain of 20,000 runs over
// 2,000 scopes. A page that may match many rows (a broad prefix, the
// domain's queue) walks its index in order and stops at the page's end, with
// no sort, in the generic plan too: on 200,000 matches a sorted generic plan
// took a second where the walk takes milliseconds. A narrow range (a
// scope's queue, a long prefix) may be fetched whole and sorted, its size
// bounded by the index range.
func TestConsoleSearchAndQueuePlansUseIndexes(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, wake_at, finished_at)
		select 'r' || i, 't' || lpad((i % 2000)::text, 6, '0'), 'g', 'h', '{}',
		       case when i % 3 = 0 then 'done' else 'running' end,
		       case when i % 3 = 0 then null else now() - (i || ' seconds')::interval end,
		       case when i % 3 = 0 then now() end
		  from generate_series(1, 20000) i`)
	testkit.ExecSQL(t, pool, `analyze`)
	ctx := testkit.Context(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	const custom, generic = "force_custom_plan", "force_generic_plan"
	for i, tc := range []struct {
		name, sql string
		args      string
		// index is the index the plan must read; ordered names the plan
		// modes that must walk it in order, without a sort.
		index   string
		ordered []string
	}{
		{"search", gen.SearchRuns, "'r1999', 'r199:', '', null, null, null, null, 101", "docket_runs_run_id_prefix_idx", nil},
		{"search, broad", gen.SearchRuns, "'r', 's', '', null, null, null, null, 101", "docket_runs_run_id_prefix_idx", []string{custom, generic}},
		{"search, filtered, after", gen.SearchRuns, "'r1', 'r2', 'r1500', null, 'g', 'running', 'queued', 101", "docket_runs_run_id_prefix_idx", nil},
		{"queued", gen.ListQueuedRuns, "null, null, null, 101", "docket_runs_ready_idx", []string{custom, generic}},
		{"queued after", gen.ListQueuedRunsAfter, "'2026-01-01T00:00:00Z', 'r20', 'g', null, null, 101", "docket_runs_ready_idx", []string{custom, generic}},
		{"scope queued", gen.ListScopeQueuedRuns, "'t000001', null, null, null, 101", "docket_runs_queued_ready_idx", nil},
		{"scope queued after", gen.ListScopeQueuedRunsAfter, "'t000001', '2026-01-01T00:00:00Z', 'r20', null, null, null, 101", "docket_runs_queued_ready_idx", nil},
	} {
		for j, mode := range []string{custom, generic} {
			name := "console_plan_" + strconv.Itoa(2*i+j)
			for _, stmt := range []string{"set plan_cache_mode = " + mode, "prepare " + name + " as " + tc.sql} {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Fatalf("%s, %s: %v", tc.name, mode, err)
				}
			}
			var plan string
			if err := conn.QueryRow(ctx, "explain (format json) execute "+name+"("+tc.args+")").Scan(&plan); err != nil {
				t.Fatalf("%s, %s: %v", tc.name, mode, err)
			}
			joined := strings.Join(testkit.PlanNodes(t, plan), ", ")
			if !strings.Contains(joined, "Index Scan on "+tc.index) || strings.Contains(joined, "Seq Scan on docket_runs") ||
				(slices.Contains(tc.ordered, mode) && strings.Contains(joined, "Sort")) {
				t.Errorf("%s, %s: plan %s", tc.name, mode, joined)
			}
		}
	}
}
