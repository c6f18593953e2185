package claim

import (
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// dispositions lists the inspection dispositions of a trace.
func dispositions(tr docket.ClaimTrace) []policy.Disposition {
	out := make([]policy.Disposition, len(tr.Inspections))
	for i, in := range tr.Inspections {
		out[i] = in.Disposition
	}
	return out
}

// positions lists the visited ring positions of a trace.
func positions(tr docket.ClaimTrace) []int64 {
	out := make([]int64, len(tr.Inspections))
	for i, in := range tr.Inspections {
		out[i] = in.RingPosition
	}
	return out
}

// expectContiguous checks the cursor contract of one call: visit ordinals
// 1..n, each visit starts where the previous ended (the first at start), and
// cursor_after is the visited position.
func expectContiguous(t testing.TB, tr docket.ClaimTrace, start int64) {
	t.Helper()
	prev := start
	for i, in := range tr.Inspections {
		if in.Visit != i+1 || in.CursorBefore != prev || in.CursorAfter != in.RingPosition {
			t.Fatalf("inspection %d = %+v, want visit %d starting at cursor %d", i, in, i+1, prev)
		}
		prev = in.CursorAfter
	}
}

// repeat returns n copies of v.
func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
