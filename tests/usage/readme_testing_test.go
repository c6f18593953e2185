package usage

import (
	"testing"
)

// The manual's "Testing your app" example is TestCreateInvoiceEnqueuesIt
// of examples/apptest, byte for byte: a real test of that app, which runs
// with the app's package against its own test database.
func TestReadmeTestingYourAppIsTheExampleTest(t *testing.T) {
	t.Parallel()
	requireDocIsRegion(t, manualFile, "## Testing your app", "../../examples/apptest/apptest_test.go", "testing")
}
