package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/internal/testkit"
	"github.com/docketrun/docket-go/policy"
)

// consolePlanNodes returns every node of a JSON EXPLAIN plan as
// "Node Type", "Node Type on index" or "Node Type on relation".
func consolePlanNodes(t *testing.T, plan string) []string {
	t.Helper()
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		t.Fatalf("plan %s: %v", plan, err)
	}
	var nodes []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		name, _ := n["Node Type"].(string)
		if idx, ok := n["Index Name"].(string); ok {
			name += " on " + idx
		} else if rel, ok := n["Relation Name"].(string); ok {
			name += " on " + rel
		}
		nodes = append(nodes, name)
		children, _ := n["Plans"].([]any)
		for _, c := range children {
			walk(c.(map[string]any))
		}
	}
	walk(doc[0].Plan)
	return nodes
}

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
		nodes := consolePlanNodes(t, plan)
		joined := strings.Join(nodes, ", ")
		if !strings.Contains(joined, "Scan on "+tc.index) || strings.Contains(joined, "Sort") || strings.Contains(joined, "Seq Scan on docket_claim_partitions") ||
			strings.Contains(joined, "Seq Scan on docket_claim_schedule") {
			t.Errorf("%s: plan %s", tc.name, joined)
		}
	}
}
