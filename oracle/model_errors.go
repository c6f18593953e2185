package oracle

import (
	"errors"
	"fmt"
)

// Model errors; every error the model returns matches one of these with
// errors.Is.
var (
	// ErrNotFound: no run or partition with that identity.
	ErrNotFound = errors.New("oracle: not found")
	// ErrDuplicateRun: a run with that run id exists.
	ErrDuplicateRun = errors.New("oracle: duplicate run id")
	// ErrClaimLost: the token is not the run's current claim token.
	ErrClaimLost = errors.New("oracle: claim lost")
	// ErrStaleFence: the expected checkpoint_seq is not the current one.
	ErrStaleFence = errors.New("oracle: stale checkpoint fence")
	// ErrInvalidCap: a cap outside 1..MaxCap.
	ErrInvalidCap = errors.New("oracle: invalid cap")
	// ErrInvalidRate: a rate outside its bounds.
	ErrInvalidRate = errors.New("oracle: invalid rate")
	// ErrInvalidArgument: an invalid claim or lifecycle argument.
	ErrInvalidArgument = errors.New("oracle: invalid argument")
	// ErrInvalidState: the operation does not apply to the run's state.
	ErrInvalidState = errors.New("oracle: invalid run state")
)

// FenceError reports a write by a stale holder; the run is unchanged. It
// unwraps to ErrClaimLost or ErrStaleFence.
type FenceError struct {
	Op    string // the operation, e.g. "Commit"
	RunID string // the run
	Err   error  // ErrClaimLost or ErrStaleFence
}

// Error implements error.
func (e *FenceError) Error() string {
	return fmt.Sprintf("oracle: %s %s: %v", e.Op, e.RunID, e.Err)
}

// Unwrap returns the sentinel.
func (e *FenceError) Unwrap() error { return e.Err }

// opError wraps a sentinel with the operation and detail.
func opError(op string, sentinel error, format string, args ...any) error {
	return fmt.Errorf("oracle: %s: %s: %w", op, fmt.Sprintf(format, args...), sentinel)
}
