// Package embedding uses the generated repository next to the docket facade
// in one of the app's own transactions: a generated read decides, the facade
// writes. The manual's embedding section is its region, and a test runs it.
package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
)

// ErrBacklogFull refuses a run while its tenant already has the given number
// of due runs waiting for admission.
var ErrBacklogFull = errors.New("embedding: the tenant's backlog is full")

// Enqueue enqueues the run that sends invoice for tenant, unless the tenant
// already has maxQueued due runs waiting for admission, in one transaction
// on pool. The limit is soft: two concurrent calls can both pass the check.
func Enqueue(ctx context.Context, pool *pgxpool.Pool, client *docket.Client, tenant string, invoice int, maxQueued int64) error {
	// embedding:begin
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// A generated read, safe to call directly: the tenant's due runs
		// waiting for admission (the scope key of a tenant is its id).
		// SchemaDB runs it in Docket's schema (Config.Schema) while tx
		// keeps the app's search_path.
		scope, err := gen.New(client.SchemaDB(tx)).InspectClaimScope(ctx, tenant)
		if err != nil {
			return err
		}
		if scope.Queued >= maxQueued {
			return ErrBacklogFull
		}
		// The write goes through the facade, in the same transaction: it
		// validates the run and wakes the Workers when tx commits.
		_, err = client.InsertRunTx(ctx, tx, docket.NewRun{
			Scope:     docket.Tenant(tenant),
			GraphID:   "send-invoice",
			GraphHash: "v1",
			State:     json.RawMessage(fmt.Sprintf(`{"invoice": %d}`, invoice)),
		})
		return err
	})
	// embedding:end
}
