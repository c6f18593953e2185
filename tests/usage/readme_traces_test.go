package usage

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/examples/traces"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The manual's traces example is the code of examples/traces, byte for byte
// (less one level of indentation), and it runs: the request span is the
// insert span's parent, the one claim call that leased the run is a root,
// the handler span is a root linked to the insert span, and the commit span
// is the handler span's child. The manual shows that output as well.
func TestReadmeTracesIsTheExampleAndRuns(t *testing.T) {
	t.Parallel()
	requireDocIsRegion(t, manualFile, "## Traces", "../../examples/traces/traces.go", "traces")
	want := "POST /invoices\n" +
		"  docket.insert\n" +
		"docket.claim, leased 1\n" +
		"docket.handler, linked to docket.insert\n" +
		"  docket.commit\n"
	if shown := docBlock(t, manualFile, "## Traces", "text"); shown != want {
		t.Fatalf("README traces output:\n%s\nwant:\n%s", shown, want)
	}

	pool := testkit.NewPool(t)
	var out strings.Builder
	if err := traces.Run(testkit.Context(t), pool, &out); err != nil {
		t.Fatalf("traces example: %v", err)
	}
	if out.String() != want {
		t.Fatalf("traces example printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where run_id = 'invoice-42' and status = 'done'`); got != 1 {
		t.Fatalf("%d done invoice-42 runs, want 1", got)
	}
}
