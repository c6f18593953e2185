package testkit

import (
	"encoding/json"
	"testing"
)

// PlanNodes returns every node of a JSON EXPLAIN plan, depth first, as
// "Node Type", "Node Type on index" or "Node Type on relation".
func PlanNodes(t testing.TB, plan string) []string {
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
