package oracle

import (
	"errors"
	"math"
	"testing"
)

func TestBoundsKnownValues(t *testing.T) {
	tests := []struct {
		name          string
		A, H, S, Q, L int
		want          BoundSet
	}{
		{"single partition", 1, 1, 32, 8, 0, BoundSet{0, 0, 1}},
		{"two partitions L0", 2, 2, 32, 8, 0, BoundSet{1, 8, 2}},
		{"dormant ring wider than S", 2, 70, 32, 8, 0, BoundSet{1, 8, 4}},
		{"small S", 3, 10, 4, 8, 2, BoundSet{6, 48, 12}},
		{"production budgets", 5, 100, 32, 8, 1, BoundSet{8, 64, 14}},
		{"S one", 3, 3, 1, 8, 1, BoundSet{4, 32, 6}},
		{"H exactly fills S", 1, 32, 32, 8, 0, BoundSet{0, 0, 1}},
		{"H one more than S", 1, 33, 32, 8, 0, BoundSet{0, 0, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Bounds(tc.A, tc.H, tc.S, tc.Q, tc.L)
			if err != nil {
				t.Fatalf("Bounds: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Bounds(%d,%d,%d,%d,%d) = %+v, want %+v", tc.A, tc.H, tc.S, tc.Q, tc.L, got, tc.want)
			}
		})
	}
}

func TestBoundsInvalid(t *testing.T) {
	tests := []struct {
		name          string
		A, H, S, Q, L int
		param         string
	}{
		{"A zero", 0, 1, 32, 8, 0, "A"},
		{"A negative", -1, 1, 32, 8, 0, "A"},
		{"H below A", 3, 2, 32, 8, 0, "H"},
		{"S zero", 1, 1, 0, 8, 0, "S"},
		{"Q zero", 1, 1, 32, 0, 0, "Q"},
		{"L negative", 1, 1, 32, 8, -1, "L"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Bounds(tc.A, tc.H, tc.S, tc.Q, tc.L)
			if !errors.Is(err, ErrInvalidBounds) {
				t.Fatalf("err = %v, want ErrInvalidBounds", err)
			}
			var ibe *InvalidBoundsError
			if !errors.As(err, &ibe) || ibe.Param != tc.param {
				t.Fatalf("err = %#v, want *InvalidBoundsError for %s", err, tc.param)
			}
		})
	}
}

func TestBoundsOverflow(t *testing.T) {
	tests := []struct {
		name          string
		A, H, S, Q, L int
	}{
		{"L plus one", 2, 2, 32, 8, math.MaxInt},
		{"outcomes", 2, 2, 32, math.MaxInt, 1},
		{"grants", math.MaxInt, math.MaxInt, 32, 1, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Bounds(tc.A, tc.H, tc.S, tc.Q, tc.L)
			if !errors.Is(err, ErrBoundsOverflow) {
				t.Fatalf("err = %v, want ErrBoundsOverflow", err)
			}
		})
	}
	// Large but representable inputs do not overflow.
	got, err := Bounds(1, math.MaxInt, 1, 1, 0)
	if err != nil || got.QualifyingCalls != math.MaxInt {
		t.Fatalf("Bounds(1, MaxInt, 1, 1, 0) = %+v, %v", got, err)
	}
}
