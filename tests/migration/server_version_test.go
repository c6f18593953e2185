package migration

import (
	"os"
	"strconv"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A matrix leg must really run on the major version it names: the harness
// fetches binaries when they are not installed, and a silent fallback to the
// local default would make the leg prove nothing.
func TestServerIsTheRequestedMajorVersion(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	major := testkit.QueryInt64(t, pool, "select current_setting('server_version_num')::int / 10000")
	t.Logf("PostgreSQL major version %d", major)
	want := os.Getenv("DOCKET_TEST_PG_VERSION")
	if want == "" {
		return
	}
	wantMajor, err := strconv.ParseInt(want, 10, 64)
	if err != nil {
		t.Fatalf("DOCKET_TEST_PG_VERSION=%q is not a major version number", want)
	}
	if major != wantMajor {
		t.Fatalf("server major version %d, DOCKET_TEST_PG_VERSION asks for %d", major, wantMajor)
	}
}
