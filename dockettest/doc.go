// Package dockettest helps an application test what its own code did with
// Docket, against its real database: which runs it inserted (also inside
// the application's still-open transaction, which is where the inserts of
// the code under test usually sit), and what its handler does with one run
// when that run is worked synchronously through the real claim and commit
// paths.
//
// The helpers take a TB, which *testing.T and *testing.B satisfy, and fail
// it with a message that lists every difference. The Require helpers read
// docket_runs with one query of their own; they never write.
package dockettest

// TB is the part of testing.TB the helpers use. Fatalf must stop the test
// (as testing.T's does) or the helper returns right after calling it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}
