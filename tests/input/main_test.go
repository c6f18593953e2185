// Package input holds the bad-input matrix: every public function given every
// kind of bad input must refuse it with a typed error and change nothing.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package input

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
