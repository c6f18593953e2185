// Package usage holds the tests of Docket as an application sees it: the
// examples of the README and the manual, the demo, the example invoices
// app, package dockettest and the dependencies Docket links.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package usage

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
