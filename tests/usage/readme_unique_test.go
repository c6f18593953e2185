package usage

import (
	"slices"
	"testing"

	"github.com/docketrun/docket-go/examples/unique"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The manual's unique-runs block is the code of examples/unique, byte for
// byte (less its indentation), and it runs: three requests for the daily
// report in one day commit three rows of the app's table and one run, the
// first request creating it and the others getting its id.
func TestReadmeUniqueRunsAreTheExampleAndRun(t *testing.T) {
	t.Parallel()
	requireDocIsRegion(t, manualFile, "## Unique runs", "../../examples/unique/unique.go", "enqueue")

	pool := testkit.NewPool(t)
	testkit.ExecSQL(t, pool, `create table report_requests (id bigint generated always as identity, tenant text not null)`)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	ctx := testkit.Context(t)
	// The three requests fall in one UTC day unless the day turns during
	// the test: then each day has its own run, created by its first request.
	var created []bool
	var runIDs []string
	for range 3 {
		runID, made, err := unique.RequestDailyReport(ctx, pool, client)
		if err != nil {
			t.Fatalf("RequestDailyReport: %v", err)
		}
		created, runIDs = append(created, made), append(runIDs, runID)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from report_requests`); n != 3 {
		t.Fatalf("%d requests committed, want 3", n)
	}
	for i, runID := range runIDs {
		if seen := slices.Contains(runIDs[:i], runID); created[i] == seen {
			t.Fatalf("request %d: created %v for run %s, seen before %v", i, created[i], runID, seen)
		}
	}
	runs := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where graph_id = 'send-report'`)
	days := testkit.QueryInt64(t, pool, `select count(distinct date_trunc('day', inserted_at at time zone 'UTC')) from docket_runs where graph_id = 'send-report'`)
	if distinct := int64(len(slices.Compact(slices.Clone(runIDs)))); runs != days || distinct != runs {
		t.Fatalf("three requests made %d runs (%d returned ids) over %d UTC days; want one run a day", runs, distinct, days)
	}
}
