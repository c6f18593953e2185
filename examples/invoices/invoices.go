// Package invoices is an app that embeds Docket in the layout the docs
// recommend: the app's pool resolves only its own schemas (search_path
// app, public), Docket lives in schema docket (Config.Schema). Its own sqlc
// queries (in store, generated from db/queries over Docket's current schema
// db/schema.sql and its own migrations) join its invoices to Docket's runs,
// naming Docket's table behind the /*schema*/ marker and running through
// docket.Client.SchemaDB, and it enqueues each invoice's run in the same
// transaction as the invoice, through the docket facade.
package invoices

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/examples/invoices/store"
)

// App is the invoices service: its pool, its own queries and Docket.
type App struct {
	pool   *pgxpool.Pool
	docket *docket.Client
}

// New binds an app to its pool and a started Docket client on that pool.
func New(pool *pgxpool.Pool, client *docket.Client) *App {
	return &App{pool: pool, docket: client}
}

// CreateInvoice stores an invoice and enqueues the run that sends it, in one
// transaction: both land or neither does.
func (a *App) CreateInvoice(ctx context.Context, tenant string, id int64, customer string, amountCents int64) error {
	return pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		runID := fmt.Sprintf("invoice-%d", id)
		if _, err := store.New(a.docket.SchemaDB(tx)).CreateInvoice(ctx, store.CreateInvoiceParams{
			ID: id, Customer: customer, AmountCents: amountCents, RunID: &runID,
		}); err != nil {
			return err
		}
		state, err := json.Marshal(map[string]int64{"invoice": id})
		if err != nil {
			return err
		}
		_, err = a.docket.InsertRunTx(ctx, tx, docket.NewRun{
			RunID: runID, Scope: docket.Tenant(tenant), GraphID: "send-invoice", GraphHash: "v1", State: state,
		})
		return err
	})
}

// Statuses lists the tenant's invoices with the status of their runs, read
// by the app's own query over Docket's table.
func (a *App) Statuses(ctx context.Context, tenant string) ([]store.InvoicesWithRunStatusRow, error) {
	return store.New(a.docket.SchemaDB(a.pool)).InvoicesWithRunStatus(ctx, tenant)
}
