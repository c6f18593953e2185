package usage

import (
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/examples/finished"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The manual's RetryRun and DeleteFinishedRuns blocks are the code of
// examples/finished, byte for byte (less one level of indentation), and
// they run: a failed run sent back by RetryRun is due again with its
// attempt counter reset and its error kept, a Worker completes it, and
// retention then deletes exactly the run that finished before the cutoff.
// Between the example's two steps the test moves every finish 40 days
// into the past, as if a month had gone by. The manual shows the output.
func TestReadmeFinishedRunsAreTheExampleAndRun(t *testing.T) {
	t.Parallel()
	requireDocIsRegion(t, manualFile, "A finished run is not a dead end:", "../../examples/finished/finished.go", "retry")
	requireDocIsRegion(t, manualFile, "Finished runs stay until you delete them:", "../../examples/finished/finished.go", "retention")

	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	if err := finished.Work(ctx, client); err != nil {
		t.Fatalf("Work: %v", err)
	}
	for runID, want := range map[string]docket.RunStatus{"invoice-1": docket.StatusDone, "invoice-2": docket.StatusFailed} {
		if run, err := client.FetchRun(ctx, docket.Tenant("acme"), runID); err != nil || run.Status != want {
			t.Fatalf("after Work %s is %+v (%v), want %s", runID, run, err, want)
		}
	}
	testkit.ExecSQL(t, pool, `update docket_runs set finished_at = finished_at - interval '40 days' where finished_at is not null`)

	var out strings.Builder
	if err := finished.Later(ctx, client, &out); err != nil {
		t.Fatalf("Later: %v", err)
	}
	want := "invoice-2 is running again, attempt counter 0\n" +
		"  kept: attempt 1 (error): mail server down\n" +
		"  kept: attempt 1 (retry): retried by an operator from status failed\n" +
		"invoice-2 is done, attempt counter 1, 2 history entries kept\n" +
		"deleted 1 runs finished more than 30 days ago\n"
	if shown := docBlock(t, manualFile, "Both blocks are `examples/finished`", "text"); shown != want {
		t.Fatalf("README finished-runs output:\n%s\nwant:\n%s", shown, want)
	}
	if out.String() != want {
		t.Fatalf("the example printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if left := testkit.RetryRunIDs(t, pool); !slices.Equal(left, []string{"invoice-2"}) {
		t.Fatalf("runs left %v, want the retried invoice-2 only", left)
	}
}
