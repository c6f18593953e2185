// Package unique is the manual's example of unique runs as a program that
// runs: an app asks, in its own transaction, for acme's daily report, and
// however often it asks in one UTC day a single run exists. The block
// between the enqueue markers is the manual's code, byte for byte; a test
// keeps them equal and runs it on a fresh database.
package unique

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// reportState is the typed state of a daily-report run.
type reportState struct {
	Kind string `json:"kind"`
}

// RequestDailyReport records a request for acme's daily report in the
// app's table report_requests and enqueues the report's run in the same
// transaction. It returns the id of the run that sends today's report and
// whether this call created it.
func RequestDailyReport(ctx context.Context, pool *pgxpool.Pool, client *docket.Client) (runID string, created bool, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// enqueue:begin
		if _, err := tx.Exec(ctx, `insert into report_requests (tenant) values ('acme')`); err != nil {
			return err
		}
		// One run per tenant and UTC day: the key is derived from the graph
		// id and the state, the day is the period.
		report, err := docket.NewTypedRun(docket.NewRun{
			Scope:     docket.Tenant("acme"),
			GraphID:   "send-report",
			GraphHash: "v1",
			Unique:    &docket.Uniqueness{Period: 24 * time.Hour},
		}, reportState{Kind: "daily"})
		if err != nil {
			return err
		}
		run, err := client.InsertRunTx(ctx, tx, report)
		switch {
		case errors.Is(err, docket.ErrUniqueRunExists):
			// Today's run exists: run is that run, nothing was written and
			// tx goes on.
		case err != nil:
			return err
		default:
			created = true
		}
		runID = run.RunID
		// enqueue:end
		return nil
	})
	return runID, created, err
}
