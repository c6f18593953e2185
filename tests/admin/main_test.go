// Package admin holds the integration tests of the operator surfaces: Admin's
// run lists and claim policy writes, the docket CLI and the console.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package admin

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
