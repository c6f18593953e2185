// Package migration holds the integration tests of the schema: migrations up
// and down, embedding them and running them with other tools, Open's startup
// checks, the schema guard and schema config, the function catalog, least
// privilege, PgBouncer and the server version.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package migration

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
