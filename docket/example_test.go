package docket_test

import (
	"context"
	"encoding/json"
	"log"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// The README's quick start: enqueue inside the application's own transaction
// and work the run off with a Worker. It compiles with the package; it needs
// a database to run.
func Example() {
	ctx := context.Background()
	databaseURL := "postgres://app@127.0.0.1:5432/app?search_path=docket"
	pool, err := pgxpool.New(ctx, databaseURL)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	migrator, err := docket.NewMigrator(pool, docket.MigratorConfig{})
	if err != nil {
		log.Fatal(err)
	}
	if err := migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		log.Fatal(err)
	}

	client, err := docket.Open(ctx, pool, docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4},
	})
	if err != nil {
		log.Fatal(err)
	}

	tx, err := pool.Begin(ctx)
	if err != nil {
		log.Fatal(err)
	}
	// ... the application's own writes in tx ...
	if _, err := client.InsertRunTx(ctx, tx, docket.NewRun{
		Scope:     docket.Tenant("acme"),
		GraphID:   "send-invoice",
		GraphHash: "v1",
		State:     json.RawMessage(`{"invoice": 42}`),
	}); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: 8,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			// ... send the invoice ...
			return docket.Complete(json.RawMessage(`{"sent": true}`))
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := worker.Run(runCtx); err != nil {
		log.Println(err)
	}
}
