package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A scoped list or count with the phase filter reads one scope's runs
// through docket_runs_list_idx and never scans docket_runs, on a domain of
// 200 scopes of 100 runs; the phase is a filter on the rows walked, as no
// index holds it.
func TestConsolePhaseFilterPlansReadOneScope(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, state, status, finished_at, wake_at, started_at)
		select 'r' || i, 't' || (i % 200), 'g', 'h', '{}', case when i % 3 = 0 then 'done' else 'running' end,
		       case when i % 3 = 0 then now() end, case when i % 3 <> 0 then now() end, '2026-01-01T00:00:00Z'::timestamptz + i * interval '1 second'
		  from generate_series(1, 20000) i`)
	testkit.ExecSQL(t, pool, `analyze`)
	for _, tc := range []struct {
		name, sql string
		args      []any
	}{
		{"list by phase", gen.ListRuns, []any{"t7", nil, nil, "queued", 101}},
		{"list by phase and status", gen.ListRuns, []any{"t7", "g", "running", "queued", 101}},
		{"later page by phase", gen.ListRunsAfter, []any{"t7", "2026-01-01T01:00:00Z", "r3600", nil, nil, "done", 101}},
		{"count phases of a scope", gen.ConsoleScopeRunPhaseCounts, []any{"t7", nil, nil, nil, nil}},
	} {
		var plan string
		if err := pool.QueryRow(testkit.Context(t), "explain (format json) "+tc.sql, tc.args...).Scan(&plan); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		joined := strings.Join(testkit.PlanNodes(t, plan), ", ")
		if !strings.Contains(joined, "Scan on docket_runs_list_idx") || strings.Contains(joined, "Seq Scan on docket_runs") {
			t.Errorf("%s: plan %s", tc.name, joined)
		}
	}
}
