package ringsweep

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRevolution checks how many unfilled calls make one revolution:
// ceil(positions / S), and one call for an empty ring or a ring of at most
// S positions.
func TestRevolution(t *testing.T) {
	for positions, want := range map[int]int{0: 1, 1: 1, 31: 1, 32: 1, 33: 2, 64: 2, 65: 3, 300: 10, 20020: 626, 100020: 3126} {
		if got := (&Sweep{perCall: 32, positions: positions}).revolution(); got != want {
			t.Errorf("revolution of %d positions = %d, want %d", positions, got, want)
		}
	}
}

// TestSweepCountsOneRevolution follows sweeps of a 300-position ring: each
// continues after its first 9 unfilled calls, ends at the 10th and the
// next starts over; the size is read again only once SizeTTL passed.
// Legacy never continues.
func TestSweepCountsOneRevolution(t *testing.T) {
	ctx := context.Background()
	reads := 0
	s := New(true, 32, func(context.Context) (int, error) { reads++; return 300, nil })
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	for round := range 3 {
		if round == 2 {
			now = now.Add(SizeTTL)
		}
		for call := 1; call <= 10; call++ {
			step := s.Unfilled(ctx)
			if step.Again != (call < 10) || step.Swept != (call == 10) || step.Err != nil {
				t.Fatalf("round %d, unfilled call %d: %+v", round, call, step)
			}
			if step.Swept && (step.Calls != 10 || step.Positions != 300) {
				t.Fatalf("round %d: swept %+v, want 10 calls over 300 positions", round, step)
			}
		}
		if s.Continuing() {
			t.Fatalf("round %d: the sweep goes on after its revolution", round)
		}
	}
	if reads != 2 {
		t.Errorf("%d size reads, want 2 (the first sweep's and the one after SizeTTL)", reads)
	}
	legacy := New(false, 32, nil)
	if step := legacy.Unfilled(ctx); step != (Step{}) || legacy.Continuing() {
		t.Errorf("a Legacy sweep continued: %+v", step)
	}
}

// A failed size read ends the sweep at once and reports the error.
func TestSweepEndsOnAFailedRead(t *testing.T) {
	boom := errors.New("boom")
	s := New(true, 32, func(context.Context) (int, error) { return 0, boom })
	if step := s.Unfilled(context.Background()); step.Again || !errors.Is(step.Err, boom) || s.Continuing() {
		t.Fatalf("after a failed read: %+v, continuing %v", step, s.Continuing())
	}
}
