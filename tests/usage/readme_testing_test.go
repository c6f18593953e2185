package usage

import (
	"testing"
)

// The README's "Testing your app" example is TestCreateInvoiceEnqueuesIt
// of examples/apptest, byte for byte: a real test of that app, which runs
// with the app's package against its own test database.
func TestReadmeTestingYourAppIsTheExampleTest(t *testing.T) {
	t.Parallel()
	requireReadmeIsRegion(t, "## Testing your app", "../../examples/apptest/apptest_test.go", "testing")
}
