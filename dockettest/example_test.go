package dockettest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/dockettest"
)

// enqueueInvoice is the application code under test: it enqueues a run in
// the caller's transaction.
func enqueueInvoice(ctx context.Context, client *docket.Client, pool *pgxpool.Pool, invoice int) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := client.InsertRunTx(ctx, tx, docket.NewRun{
		RunID:     fmt.Sprintf("invoice-%d", invoice),
		Scope:     docket.Tenant("acme"),
		GraphID:   "send-invoice",
		GraphHash: "v1",
		State:     json.RawMessage(fmt.Sprintf(`{"invoice": %d}`, invoice)),
	}); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// In an application's test: assert what the code under test inserted,
// then work that run through the application's real handler.
func ExampleWork() {
	var t *testing.T               // the test's own
	var ctx context.Context        // the test's context
	var pool *pgxpool.Pool         // the application's pool on its test database
	var client *docket.Client      // opened on pool as the application opens it
	var sendInvoice docket.Handler // the application's handler

	if err := enqueueInvoice(ctx, client, pool, 42); err != nil {
		t.Fatal(err)
	}
	dockettest.RequireInserted(ctx, t, client, dockettest.Expect{
		Scope:   docket.Tenant("acme"),
		RunID:   "invoice-42",
		GraphID: "send-invoice",
		Status:  docket.StatusRunning,
		State:   json.RawMessage(`{"invoice": 42}`),
	})
	run := dockettest.Work(ctx, t, client, docket.Tenant("acme"), "invoice-42", sendInvoice)
	if run.Status != docket.StatusDone {
		t.Fatalf("invoice-42 is %s", run.Status)
	}
}

// In an application's test of its retry behaviour: the first failed
// attempt of the handler is released for the policy's backoff, exactly.
func ExampleWorkWith() {
	var t *testing.T               // the test's own
	var ctx context.Context        // the test's context
	var client *docket.Client      // opened as the application opens it
	var sendInvoice docket.Handler // the application's handler, failing here

	policy := docket.RetryPolicy{MaxAttempts: 3, Backoff: time.Minute}
	run := dockettest.WorkWith(ctx, t, client, docket.Tenant("acme"), "invoice-42",
		dockettest.WorkOptions{Handler: sendInvoice, Retry: policy})
	if run.LatestCheckpointType != "backoff" || run.Attempt != 1 || run.WakeAt.Sub(run.UpdatedAt) != time.Minute {
		t.Fatalf("invoice-42 after a failed attempt: %+v", run)
	}
}

// printTB is a dockettest.TB that prints what a helper reports, as a
// recording fake in the helpers' own tests would collect it.
type printTB struct{}

func (printTB) Helper() {}

func (printTB) Fatalf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

// A helper fails its TB with one message naming what is wrong; this
// expectation names no run, which is refused before any read.
func ExampleRequireInserted() {
	var pool *pgxpool.Pool
	dockettest.RequireInserted(context.Background(), printTB{}, pool, dockettest.Expect{Scope: docket.Tenant("acme")})
	// Output: dockettest: RequireInserted: an expectation needs a RunID or a GraphID
}
