package oracle

import (
	"errors"
	"fmt"
	"math"
)

// Budgets of one claim call (docs/claim-algorithm.md, "Budgets").
const (
	// DefaultS is the number of inspections an unfilled qualifying call consumes.
	DefaultS = 32
	// DefaultQ is the maximum number of outcomes of one grant.
	DefaultQ = 8
	// DefaultK is the maximum number of structural run IDs frozen per visit.
	DefaultK = 16
)

// ErrInvalidBounds is matched (errors.Is) by every *InvalidBoundsError.
var ErrInvalidBounds = errors.New("oracle: invalid bounds input")

// ErrBoundsOverflow reports that a bound does not fit in an int64.
var ErrBoundsOverflow = errors.New("oracle: bound overflows int64")

// InvalidBoundsError names the first invalid input given to Bounds.
type InvalidBoundsError struct {
	Param  string // "A", "H", "S", "Q" or "L"
	Value  int    // the rejected value
	Reason string // the violated constraint, e.g. "A >= 1"
}

// Error implements error.
func (e *InvalidBoundsError) Error() string {
	return fmt.Sprintf("oracle: invalid bounds input %s = %d: want %s", e.Param, e.Value, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidBounds) true.
func (e *InvalidBoundsError) Is(target error) bool { return target == ErrInvalidBounds }

// BoundSet holds the three fixed-window bounds (docs/claim-algorithm.md,
// "The bounds").
type BoundSet struct {
	// CompetingGrants bounds grants to competitors strictly after the window
	// opens and strictly before the target grant: (L+1)(A-1).
	CompetingGrants int64
	// CompetingOutcomes bounds the outcomes of those grants: Q(L+1)(A-1).
	CompetingOutcomes int64
	// QualifyingCalls bounds qualifying calls through and including the
	// target-grant call: (L+1)((A-1) + ceil((H-A+1)/S)).
	QualifyingCalls int64
}

// Bounds computes the fixed-window bounds for a cohort of A partitions, a
// ring of H positions, S inspections per unfilled call, Q outcomes per grant
// and at most L consecutive failed target inspections. Invalid inputs
// (A < 1, H < A, S < 1, Q < 1, L < 0) return an *InvalidBoundsError; a bound
// that does not fit in an int64 returns an error wrapping ErrBoundsOverflow.
// In parked mode pass H' (the largest awake ring during the window) as H;
// the competitor bounds do not depend on H.
func Bounds(A, H, S, Q, L int) (BoundSet, error) {
	switch {
	case A < 1:
		return BoundSet{}, &InvalidBoundsError{Param: "A", Value: A, Reason: "A >= 1"}
	case H < A:
		return BoundSet{}, &InvalidBoundsError{Param: "H", Value: H, Reason: fmt.Sprintf("H >= A (A = %d)", A)}
	case S < 1:
		return BoundSet{}, &InvalidBoundsError{Param: "S", Value: S, Reason: "S >= 1"}
	case Q < 1:
		return BoundSet{}, &InvalidBoundsError{Param: "Q", Value: Q, Reason: "Q >= 1"}
	case L < 0:
		return BoundSet{}, &InvalidBoundsError{Param: "L", Value: L, Reason: "L >= 0"}
	}
	a, h, s, q, l := int64(A), int64(H), int64(S), int64(Q), int64(L)
	rounds, ok := add64(l, 1)
	if !ok {
		return BoundSet{}, fmt.Errorf("%w: L + 1 with L = %d", ErrBoundsOverflow, L)
	}
	grants, ok := mul64(rounds, a-1)
	if !ok {
		return BoundSet{}, fmt.Errorf("%w: competing grants (L+1)(A-1)", ErrBoundsOverflow)
	}
	outcomes, ok := mul64(q, grants)
	if !ok {
		return BoundSet{}, fmt.Errorf("%w: competing outcomes Q(L+1)(A-1)", ErrBoundsOverflow)
	}
	rest := h - a + 1        // >= 1, no overflow since 1 <= A <= H
	sweeps := (rest-1)/s + 1 // ceil(rest / s) for rest >= 1
	perRound, ok := add64(a-1, sweeps)
	if !ok {
		return BoundSet{}, fmt.Errorf("%w: qualifying calls per round", ErrBoundsOverflow)
	}
	calls, ok := mul64(rounds, perRound)
	if !ok {
		return BoundSet{}, fmt.Errorf("%w: qualifying calls", ErrBoundsOverflow)
	}
	return BoundSet{CompetingGrants: grants, CompetingOutcomes: outcomes, QualifyingCalls: calls}, nil
}

// add64 adds two non-negative int64 values and reports whether the sum fits.
func add64(x, y int64) (int64, bool) {
	if x > math.MaxInt64-y {
		return 0, false
	}
	return x + y, true
}

// mul64 multiplies two non-negative int64 values and reports whether the
// product fits.
func mul64(x, y int64) (int64, bool) {
	if x == 0 || y == 0 {
		return 0, true
	}
	if x > math.MaxInt64/y {
		return 0, false
	}
	return x * y, true
}
