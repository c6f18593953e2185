// Package claim holds the integration tests of claiming: claim calls and
// plans, the claim policies, TenantFair's ring, stale and locked-head paths,
// parking, the counter lock order, faults while claiming, the async commit
// setting and the separation model.
//
// Every test runs against a real PostgreSQL in its own database cloned from a
// migrated template; see tests/internal/pgtest for how the server is found,
// started or shared.
package claim

import (
	"os"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.Main(m))
}
