package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// emptyState is the document of every scorecard run.
var emptyState = json.RawMessage(`{}`)

// insertDocketRuns inserts runs in order through the public batch insert, in
// batches; tenantOf names each run's tenant and wakeAt its due time (zero:
// now).
func insertDocketRuns(ctx context.Context, client *docket.Client, runs []int, tenantOf func(int) string, wakeAt time.Time) error {
	for start := 0; start < len(runs); start += insertBatch {
		end := min(start+insertBatch, len(runs))
		batch := make([]docket.NewRun, 0, end-start)
		for _, r := range runs[start:end] {
			batch = append(batch, docket.NewRun{
				RunID: runID(r), Scope: docket.Tenant(tenantOf(r)),
				GraphID: "bench", GraphHash: "v1", State: emptyState, WakeAt: wakeAt,
			})
		}
		if _, err := client.InsertRuns(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}
