// Package apptest is an app whose own test is the manual's "Testing your
// app" example: apptest_test.go asserts, with dockettest, what
// createInvoice inserts inside its transaction and works that run through
// sendInvoice, on a real test database. The function between the testing
// markers is the manual's code, byte for byte; a test keeps the two equal.
package apptest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
)

// createInvoice stores invoice id in the app's invoices table and enqueues
// the run that sends it, both in tx: they land together when tx commits.
func createInvoice(ctx context.Context, client *docket.Client, tx pgx.Tx, id int64) error {
	if _, err := tx.Exec(ctx, `insert into invoices (id) values ($1)`, id); err != nil {
		return fmt.Errorf("apptest: store invoice %d: %w", id, err)
	}
	_, err := client.InsertRunTx(ctx, tx, docket.NewRun{
		RunID:     fmt.Sprintf("invoice-%d", id),
		Scope:     docket.Tenant("acme"),
		GraphID:   "send-invoice",
		GraphHash: "v1",
		State:     json.RawMessage(fmt.Sprintf(`{"invoice": %d}`, id)),
	})
	if err != nil {
		return fmt.Errorf("apptest: enqueue invoice %d: %w", id, err)
	}
	return nil
}

// sendInvoice is the app's handler of send-invoice runs: it sends the
// invoice (here, it only records that it did) and completes the run.
func sendInvoice(_ context.Context, job *docket.Job) docket.Result {
	var invoice struct {
		Invoice int64 `json:"invoice"`
	}
	if err := json.Unmarshal(job.State, &invoice); err != nil {
		return docket.FailNow(fmt.Errorf("apptest: run %s: %w", job.RunID, err))
	}
	return docket.Complete(json.RawMessage(fmt.Sprintf(`{"invoice": %d, "sent": true}`, invoice.Invoice)))
}
