// Package queues is the manual's queues example as a program that runs: two
// queues, each a Docket domain in a schema of its own, opened on one pool
// and served by one process whose Workers start and stop together. The block
// between the queues markers is the manual's code, byte for byte; a test
// keeps the two equal and runs Run on a fresh database.
package queues

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// Run creates the email and reports queues on pool, inserts one run in
// each and runs both queues' Workers until each run has been handled, then
// stops them together. It returns the run ids each queue's handler saw.
func Run(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger) (map[string][]string, error) {
	ctx, done := context.WithCancel(ctx)
	defer done()
	var (
		mu   sync.Mutex
		seen = map[string][]string{}
	)
	handler := func(queue string) docket.Handler {
		return func(_ context.Context, job *docket.Job) docket.Result {
			mu.Lock()
			defer mu.Unlock()
			seen[queue] = append(seen[queue], job.RunID)
			if len(seen) == 2 {
				done() // one run in each queue is the whole example
			}
			return docket.Complete(nil)
		}
	}
	err := queues(ctx, pool, logger, handler("email"), handler("reports"))
	mu.Lock()
	defer mu.Unlock()
	return seen, err
}

func queues(ctx context.Context, pool *pgxpool.Pool, logger *slog.Logger, sendEmail, buildReport docket.Handler) error {
	// queues:begin
	// Each queue is a Docket domain in its own schema (`docket migrate up
	// --create --schema email`, `--schema reports`): its own ring, cursor and caps.
	for _, schema := range []string{"email", "reports"} {
		migrator, err := docket.NewMigrator(pool, docket.MigratorConfig{Schema: schema})
		if err != nil {
			return err
		}
		if err := migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
			return err
		}
	}
	// One Client per queue, all on the app's pool and logger.
	open := func(schema string, defaultCap int) (*docket.Client, error) {
		return docket.Open(ctx, pool, docket.Config{
			TenantMode:  docket.TenantRequired,
			ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: defaultCap},
			Schema:      schema,
			Logger:      logger,
		})
	}
	email, err := open("email", 4)
	if err != nil {
		return err
	}
	reports, err := open("reports", 1)
	if err != nil {
		return err
	}
	// A run goes to the queue whose Client inserts it.
	if _, err := email.InsertRun(ctx, docket.NewRun{RunID: "welcome-acme", Scope: docket.Tenant("acme"),
		GraphID: "send-email", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		return err
	}
	if _, err := reports.InsertRun(ctx, docket.NewRun{RunID: "monthly-acme", Scope: docket.Tenant("acme"),
		GraphID: "build-report", GraphHash: "v1", State: json.RawMessage(`{}`)}); err != nil {
		return err
	}
	// Each queue's Worker has its own concurrency and handler; Queues runs
	// them together and one Stop drains them all.
	emailWorker, err := docket.NewWorker(email, docket.WorkerConfig{Concurrency: 8, Handler: sendEmail})
	if err != nil {
		return err
	}
	reportsWorker, err := docket.NewWorker(reports, docket.WorkerConfig{Concurrency: 2, Handler: buildReport})
	if err != nil {
		return err
	}
	all, err := docket.NewQueues(emailWorker, reportsWorker)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = all.Stop(context.WithoutCancel(ctx))
	}()
	return all.Run(context.WithoutCancel(ctx))
	// queues:end
}
