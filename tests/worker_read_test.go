package tests

import (
	"slices"
	"testing"

	"github.com/docketrun/docket-go/gen"
)

// TestWorkerLeaseReadKeepsEachPairInItsScope reads runs by (scope, run)
// pairs as the worker reads a claim call's leases: a pair whose run lives in
// another scope, or does not exist, reads nothing, exactly like FetchRun.
func TestWorkerLeaseReadKeepsEachPairInItsScope(t *testing.T) {
	t.Parallel()
	s := newRSStore(t, 4)
	s.insert("wr-a", "wr-a-1")
	s.insert("wr-a", "wr-a-2")
	s.insert("wr-b", "wr-b-1")
	rows, err := gen.New(s.pool).GetRunsByKeys(testContext(t), gen.GetRunsByKeysParams{
		ScopeKeys: []string{"wr-a", "wr-b", "wr-b", "wr-a", "wr-c"},
		RunIds:    []string{"wr-a-1", "wr-b-1", "wr-a-2", "wr-missing", "wr-a-1"},
	})
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var got []string
	for _, row := range rows {
		got = append(got, row.RunID)
	}
	slices.Sort(got)
	// One row per matching pair: wr-a-1 read through wr-c would appear twice.
	if want := []string{"wr-a-1", "wr-b-1"}; !slices.Equal(got, want) {
		t.Fatalf("read %v, want %v", got, want)
	}
}
