package lifecycle

import (
	"slices"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Helpers of the retry and retention tests.

// withUnfinished returns ring with scope's unfinished count set to n.
func withUnfinished(ring []testkit.RetryRingRow, scope string, n int64) []testkit.RetryRingRow {
	out := slices.Clone(ring)
	for i := range out {
		if out[i].Scope == scope {
			out[i].Unfinished = n
		}
	}
	return out
}
