// Package quickstart is the README's quick start as a program that runs: an
// app with its own pool and tables enqueues a run in its own transaction and
// works it off with a Worker. The block between the quickstart markers is
// the README's code, byte for byte; a test keeps the two equal and runs Run
// on a fresh database.
package quickstart

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// Run is the quick start against databaseURL, whose search_path is the
// app's own (it must hold an invoices table). sendInvoice is the app's
// work, given the invoice id decoded from the run's state; once it has run
// for the one invoice, Run stops the Worker gracefully and returns.
func Run(ctx context.Context, databaseURL string, sendInvoice func(ctx context.Context, invoiceID int) error) error {
	ctx, workedOff := context.WithCancel(ctx)
	defer workedOff()
	work := func(ctx context.Context, invoiceID int) error {
		defer workedOff() // one invoice is the whole quick start
		return sendInvoice(ctx, invoiceID)
	}
	return quickStart(ctx, databaseURL, work)
}

func quickStart(ctx context.Context, databaseURL string, sendInvoice func(ctx context.Context, invoiceID int) error) error {
	// quickstart:begin
	// The state of a send-invoice run, as Docket stores it (JSON).
	type invoice struct {
		ID int `json:"invoice"`
	}

	pool, err := pgxpool.New(ctx, databaseURL) // your application's pool, with its own search_path
	if err != nil {
		return err
	}
	defer pool.Close()

	// Once per deployment (stopped, homogeneous rollout; see docs/operations.md).
	migrator, err := docket.NewMigrator(pool, docket.MigratorConfig{Schema: "docket"})
	if err != nil {
		return err
	}
	if err := migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		return err
	}

	client, err := docket.Open(ctx, pool, docket.Config{
		Schema:      "docket", // Docket's tables; the app's search_path stays as it is
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4},
	})
	if err != nil {
		return err
	}

	// Enqueue atomically with your own writes.
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `insert into invoices (id) values (42)`); err != nil {
		return err
	}
	run, err := docket.NewTypedRun(docket.NewRun{
		RunID:     "invoice-42",
		Scope:     docket.Tenant("acme"),
		GraphID:   "send-invoice",
		GraphHash: "v1",
	}, invoice{ID: 42})
	if err != nil {
		return err
	}
	if _, err := client.InsertRunTx(ctx, tx, run); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}

	// Work it off: one handler per graph id, each given its run's state
	// decoded into its own type.
	handlers := docket.NewHandlers()
	err = docket.Register(handlers, "send-invoice", func(ctx context.Context, job *docket.Job, inv invoice) docket.Result {
		if err := sendInvoice(ctx, inv.ID); err != nil {
			return docket.Fail(err)
		}
		return docket.Complete(nil)
	}, docket.HandlerTimeout(time.Minute))
	if err != nil {
		return err
	}
	worker, err := docket.NewWorker(client, docket.WorkerConfig{Concurrency: 8, Handlers: handlers})
	if err != nil {
		return err
	}
	// Until ctx ends (say, on SIGTERM); then stop gracefully: running
	// handlers finish and their verdicts are written before Run returns.
	go func() {
		<-ctx.Done()
		_ = worker.Stop(context.WithoutCancel(ctx))
	}()
	return worker.Run(context.WithoutCancel(ctx))
	// quickstart:end
}
