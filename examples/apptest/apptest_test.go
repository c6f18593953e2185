package apptest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/dockettest"
)

// testing:begin
func TestCreateInvoiceEnqueuesIt(t *testing.T) {
	ctx := context.Background()
	pool, client := newTestApp(t) // your fixture: the app's pool on its test database, and its client
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := createInvoice(ctx, client, tx, 42); err != nil { // your code: inserts with client.InsertRunTx
		t.Fatal(err)
	}
	// Sees the uncommitted insert, because it reads inside tx.
	dockettest.RequireInsertedTx(ctx, t, tx, dockettest.Expect{
		Scope: docket.Tenant("acme"), RunID: "invoice-42", GraphID: "send-invoice",
		Status: docket.StatusRunning, State: json.RawMessage(`{"invoice": 42}`),
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	run := dockettest.Work(ctx, t, client, docket.Tenant("acme"), "invoice-42", sendInvoice)
	if run.Status != docket.StatusDone {
		t.Fatalf("invoice-42 is %s", run.Status)
	}
}

// testing:end

// An invoice and its run land together or not at all: after a rollback
// neither the invoice nor its run is there, as the pool sees it.
func TestCreateInvoiceRolledBackLeavesNoRun(t *testing.T) {
	ctx := context.Background()
	pool, client := newTestApp(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := createInvoice(ctx, client, tx, 7); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	dockettest.RequireNotInserted(ctx, t, pool, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "invoice-7"})
	var invoices int64
	if err := pool.QueryRow(ctx, `select count(*) from invoices`).Scan(&invoices); err != nil || invoices != 0 {
		t.Fatalf("%d invoices after a rollback (%v), want 0", invoices, err)
	}
}
