// Package lifecycle holds the integration tests of a run's life in the run
// store: insert, admission, fences, commits in the caller's transaction,
// retry, errors, retention, schedules, deadlines, exec modes and odd
// identifiers.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package lifecycle

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
