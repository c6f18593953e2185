// Package worker holds the integration tests of the Worker: claiming and
// reading, attempts, commits, events and hooks, exec modes, restarts,
// retries, retention, sweeps, wake on write and faults while committing.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package worker

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
