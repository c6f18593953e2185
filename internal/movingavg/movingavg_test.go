package movingavg

import (
	"testing"
	"time"
)

func TestAverageStartsAtTheFirstObservationAndMovesByItsWeight(t *testing.T) {
	var a Duration
	if a.Value() != 0 {
		t.Fatalf("empty average %v", a.Value())
	}
	a.Observe(10 * time.Millisecond)
	if a.Value() != 10*time.Millisecond {
		t.Fatalf("after one observation %v", a.Value())
	}
	a.Observe(20 * time.Millisecond)
	if a.Value() != 12*time.Millisecond {
		t.Fatalf("after two observations %v, want 12ms", a.Value())
	}
	var tiny Duration
	tiny.Observe(0)
	if tiny.Value() != time.Microsecond {
		t.Fatalf("a zero observation counts as %v, want 1µs", tiny.Value())
	}
}
