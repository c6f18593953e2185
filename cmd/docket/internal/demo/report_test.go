package demo

import (
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var sorted []time.Duration
	for i := 1; i <= 20; i++ {
		sorted = append(sorted, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[int]time.Duration{50: 10 * time.Millisecond, 95: 19 * time.Millisecond, 100: 20 * time.Millisecond, 1: time.Millisecond} {
		if got := percentile(sorted, p); got != want {
			t.Errorf("p%d = %v, want %v", p, got, want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("empty p50 = %v, want 0", got)
	}
}

func TestHotBeforeLastLightCountsStrictlyEarlierStarts(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	r := drainResult{
		hotStarts:   []time.Time{at(1), at(2), at(5), at(9)},
		lightStarts: []time.Time{at(3), at(5), at(4)},
	}
	if got := hotBeforeLastLight(r); got != 2 {
		t.Fatalf("hot before last light = %d, want 2", got)
	}
}
