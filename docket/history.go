package docket

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds of a run's error history, enforced by the schema's named checks
// (docket_runs_errors_bound_check) and by the writer.
const (
	// MaxRunErrors is how many entries a run's error history keeps: a commit
	// that records one more drops the oldest.
	MaxRunErrors = 20
	// MaxRunErrorBytes is the longest error text an entry keeps, in bytes of
	// UTF-8; a longer text is cut at the last whole character that fits.
	MaxRunErrorBytes = 2000
)

// The kinds of a RunError.
const (
	// ErrorKindError is an error the handler returned: Fail, FailNow,
	// RetryAtError or RetryAfterError.
	ErrorKindError = "error"
	// ErrorKindPanic is a handler panic the worker recovered; the entry's
	// text is the panic value as fmt.Sprint prints it, followed by the
	// innermost frames of the panicking handler (see PanicStackFrames).
	ErrorKindPanic = "panic"
	// ErrorKindNoResult is a handler that returned the zero Result.
	ErrorKindNoResult = "no_result"
	// ErrorKindInvalidResult is a verdict the store refused as invalid; the
	// entry's text is the refusal.
	ErrorKindInvalidResult = "invalid_result"
	// ErrorKindRetry is no failure: RetryRun sent the finished run back to
	// work. Its Attempt is the attempts spent before (at least 1), its text
	// names the status the run left, and the attempt count restarts after
	// it. A commit never records this kind.
	ErrorKindRetry = "retry"
)

// RunError is one entry of a run's error history: a handler attempt that
// failed, or an operator's retry (ErrorKindRetry). Its text may carry whatever the handler's error carried, so it is
// stored with the run and never logged above debug level or used as a
// metric attribute.
type RunError struct {
	// Attempt is the number of the failed handler attempt (the run's
	// Attempt counter after it).
	Attempt int `json:"attempt"`
	// At is the database time of the commit that recorded the failure.
	At time.Time `json:"at"`
	// Kind is ErrorKindError, ErrorKindPanic, ErrorKindNoResult,
	// ErrorKindInvalidResult or ErrorKindRetry.
	Kind string `json:"kind"`
	// Error is the error text, at most MaxRunErrorBytes of valid UTF-8.
	Error string `json:"error"`
}

// AttemptChange is what a commit does to the run's handler-attempt counter
// (Run.Attempt).
type AttemptChange int

// The attempt changes of a CommitRequest.
const (
	// AttemptReset restarts the counter at 0: the commit is progress (the
	// Worker's Complete, Continue and WaitExternal verdicts).
	AttemptReset AttemptChange = iota
	// AttemptKeep leaves the counter as it is: a checkpoint inside an
	// attempt, a yield or a hand-back, which neither fail nor finish one.
	AttemptKeep
	// AttemptCount adds one: the commit ends a handler attempt with a
	// retry or failure verdict.
	AttemptCount
)

// sql is the attempt_change argument of the commit statements.
func (a AttemptChange) sql() string {
	switch a {
	case AttemptKeep:
		return "keep"
	case AttemptCount:
		return "count"
	}
	return "reset"
}

// valid reports whether a is one of the three changes.
func (a AttemptChange) valid() bool { return a >= AttemptReset && a <= AttemptCount }

// AttemptFailure is the failure a commit with AttemptCount records in the
// run's error history.
type AttemptFailure struct {
	// Kind is ErrorKindError, ErrorKindPanic, ErrorKindNoResult or
	// ErrorKindInvalidResult.
	Kind string
	// Error is the error text; it is cut to MaxRunErrorBytes on a UTF-8
	// boundary, with invalid UTF-8 and NUL bytes (which PostgreSQL text
	// cannot hold) replaced by U+FFFD.
	Error string
}

// validFailureKind reports whether kind is one of the RunError kinds.
func validFailureKind(kind string) bool {
	switch kind {
	case ErrorKindError, ErrorKindPanic, ErrorKindNoResult, ErrorKindInvalidResult:
		return true
	}
	return false
}

// errorText makes s storable as an entry's text: valid UTF-8 without NUL,
// cut to at most MaxRunErrorBytes at a character boundary.
func errorText(s string) string {
	s = storableText(s)
	if len(s) <= MaxRunErrorBytes {
		return s
	}
	cut := MaxRunErrorBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// storableText is s as PostgreSQL text can hold it: invalid UTF-8 and NUL
// bytes replaced by U+FFFD.
func storableText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "\uFFFD")
}

// runErrors decodes a stored error history. The schema's checks keep its
// shape, so an entry that does not decode (which only a hand-written row
// can hold) is skipped rather than failing the read of the run.
func runErrors(stored []byte) []RunError {
	var raw []json.RawMessage
	if json.Unmarshal(stored, &raw) != nil {
		return nil
	}
	out := make([]RunError, 0, len(raw))
	for _, r := range raw {
		var e RunError
		if json.Unmarshal(r, &e) == nil {
			out = append(out, e)
		}
	}
	return out
}
