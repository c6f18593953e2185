package docket

import "fmt"

// ClaimPolicyWriteOptions configures one claim-policy write.
type ClaimPolicyWriteOptions struct {
	// ExpectedVersion, when set, makes the write a compare-and-set: it
	// applies only if the current version equals it, and otherwise fails with
	// a *StaleVersionError (errors.Is ErrStale) and writes nothing. A scope
	// that has no partition yet is at version 0.
	ExpectedVersion *int64
}

// StaleVersionError reports a compare-and-set write that expected another
// version than the current one; nothing was written. It matches ErrStale.
type StaleVersionError struct {
	// Expected is the version the caller expected.
	Expected int64
	// Current is the version found under the row lock.
	Current int64
}

func (e *StaleVersionError) Error() string {
	return fmt.Sprintf("docket: stale version: expected %d, current %d", e.Expected, e.Current)
}

// Is makes errors.Is(err, ErrStale) hold.
func (e *StaleVersionError) Is(target error) bool { return target == ErrStale }

// validate rejects a negative expected version, which could never match.
func (o ClaimPolicyWriteOptions) validate() error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion < 0 {
		return invalidArgument("expected version %d is negative", *o.ExpectedVersion)
	}
	return nil
}

// check compares the current version with the expected one, if any.
func (o ClaimPolicyWriteOptions) check(current int64) error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion != current {
		return &StaleVersionError{Expected: *o.ExpectedVersion, Current: current}
	}
	return nil
}

// checkedCap validates a cap argument and converts it for the database.
func checkedCap(maxActiveRuns int) (int32, error) {
	if err := validateCap(maxActiveRuns); err != nil {
		return 0, fmt.Errorf("%w: got %d", err, maxActiveRuns)
	}
	return int32(maxActiveRuns), nil
}
