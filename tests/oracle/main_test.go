// Package oracle holds the differential tests that run the same operations on
// PostgreSQL and on the database-free oracle, the fair rotation check
// against the oracle, and the oracle model's own property tests (with
// rapid, which stays out of the library's go.mod; they need no database).
//
// Every database test runs against a real PostgreSQL in its own database
// cloned from a migrated template; see tests/internal/pgtest for how the
// server is found, started or shared.
package oracle

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
