// Package telemetry holds the integration tests of Docket's metrics and
// traces, and of what the Worker counts.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package telemetry

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
