package docket

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestRingSweepRevolution checks how many unfilled calls make one
// revolution: ceil(positions / S), and one call for an empty ring or a ring
// of at most S positions.
func TestRingSweepRevolution(t *testing.T) {
	for positions, want := range map[int]int{0: 1, 1: 1, 31: 1, 32: 1, 33: 2, 64: 2, 65: 3, 300: 10, 20020: 626, 100020: 3126} {
		if got := (&ringSweep{positions: positions}).revolution(); got != want {
			t.Errorf("revolution of %d positions = %d, want %d", positions, got, want)
		}
	}
}

// TestRingSweepCountsOneRevolution follows a sweep whose ring size was just
// read (so no read happens): it continues after the first 9 unfilled calls
// of a 300-position ring, ends at the 10th and starts over after it. Legacy
// never continues.
func TestRingSweepCountsOneRevolution(t *testing.T) {
	ctx := context.Background()
	w := &Worker{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s := &ringSweep{tenantFair: true, positions: 300, readAt: time.Now()}
	for round := range 2 {
		for call := 1; call <= 10; call++ {
			if got, want := w.unfilledCall(ctx, s), call < 10; got != want {
				t.Fatalf("round %d, unfilled call %d: continue = %v, want %v", round, call, got, want)
			}
		}
		if s.continuing() {
			t.Fatalf("round %d: the sweep goes on after its revolution", round)
		}
	}
	legacy := &ringSweep{positions: 300, readAt: time.Now()}
	if w.unfilledCall(ctx, legacy) || legacy.continuing() {
		t.Error("a Legacy sweep continued")
	}
}
