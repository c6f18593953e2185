// Package oracle holds the differential tests that run the same operations on
// PostgreSQL and on the database-free oracle, and the fair rotation check
// against the oracle.
//
// Every test runs against a real PostgreSQL in its own database cloned from
// a migrated template; see internal/pgtest for how the server is found,
// started or shared.
package oracle

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
