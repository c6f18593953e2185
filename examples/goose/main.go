// Command goose is an app that runs goose for its migrations and applies
// Docket's with it, into a schema of Docket's own: it writes Docket's
// goose-format files (what `docket migrate sql --format goose --out DIR`
// writes) into a directory apart from the app's, runs goose over them with
// a connection whose search_path is "docket" (so goose's goose_db_version
// table lives there too), opens a Docket client with Config.Schema
// "docket" on the app's own pool, works one run, and, with -adopt, records
// the goose-applied versions in Docket's ledger so that `docket migrate`
// can take over.
//
//	go run . -database-url "$DATABASE_URL" [-adopt]
//
// The example is a module of its own, so goose stays out of the go.mod of
// Docket's library module and of everything an app that imports docket
// links. docs/embedding.md shows its goose region; a test in tests/usage
// keeps the two equal and runs the program on a fresh database.
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

func main() {
	databaseURL := flag.String("database-url", os.Getenv("DATABASE_URL"), "the app's database (default $DATABASE_URL)")
	dir := flag.String("dir", "", "where to write Docket's goose files (default: a temporary directory)")
	adopt := flag.Bool("adopt", false, "record the goose-applied versions in Docket's ledger afterwards")
	flag.Parse()
	if *databaseURL == "" {
		fmt.Fprintln(os.Stderr, "goose example: pass -database-url or set DATABASE_URL")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *databaseURL, *dir, *adopt); err != nil {
		fmt.Fprintln(os.Stderr, "goose example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, databaseURL, dir string, adopt bool) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "docket-goose-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := gooseUp(ctx, databaseURL, dir); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, databaseURL) // the app's own pool and search_path
	if err != nil {
		return err
	}
	defer pool.Close()
	// A schema goose applied keeps no Docket ledger: Open judges it by its
	// shape, which must be the newest version's.
	client, err := docket.Open(ctx, pool, docket.Config{
		Schema:      "docket",
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 4},
	})
	if err != nil {
		return err
	}
	if err := workOneRun(ctx, client); err != nil {
		return err
	}
	if !adopt {
		return nil
	}
	// goose:adopt:begin
	// From now on `docket migrate` (or a docket.Migrator) manages the
	// schema: adopt records the versions whose shape the schema has in
	// docket_schema_migrations; goose's own table is left as it is.
	migrator, err := docket.NewMigratorURL(databaseURL, docket.MigratorConfig{Schema: "docket", Log: os.Stdout})
	if err != nil {
		return err
	}
	if err := migrator.Migrate(ctx, docket.MigrateAdopt, docket.MigrateOptions{}); err != nil {
		return err
	}
	// goose:adopt:end
	return migrator.Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}) // nothing pending
}

// gooseUp writes Docket's goose files into dir and applies them with goose
// into schema docket.
func gooseUp(ctx context.Context, databaseURL, dir string) error {
	// goose:begin
	// Docket's files go in a directory of their own, not the app's: they
	// install into the connection's current schema, so mixed into the app's
	// goose directory they would land in the app's schema.
	migrator, err := docket.NewMigrator(nil, docket.MigratorConfig{}) // no database: Files only
	if err != nil {
		return err
	}
	files, err := migrator.Files(docket.FormatGoose)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.SQL), 0o644); err != nil {
			return err
		}
	}
	// A connection whose search_path is docket: the files install there,
	// and goose keeps its goose_db_version table there too, apart from
	// the app's. goose does not create the schema.
	cfg, err := pgx.ParseConfig(databaseURL)
	if err != nil {
		return err
	}
	cfg.RuntimeParams["search_path"] = "docket"
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if _, err := db.ExecContext(ctx, `create schema if not exists docket`); err != nil {
		return err
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS(dir))
	if err != nil {
		return err
	}
	results, err := provider.Up(ctx)
	// goose:end
	for _, r := range results {
		fmt.Printf("goose: applied %s\n", filepath.Base(r.Source.Path))
	}
	return errors.Join(err, schemaOnly(ctx, db))
}

// schemaOnly checks that goose kept its table beside Docket's, in schema
// docket, and that nothing landed in the app's public schema.
func schemaOnly(ctx context.Context, db *sql.DB) error {
	var docketTables, publicTables int
	err := db.QueryRowContext(ctx, `select
		count(*) filter (where schemaname = 'docket' and tablename in ('goose_db_version', 'docket_runs')),
		count(*) filter (where schemaname = 'public')
		from pg_tables`).Scan(&docketTables, &publicTables)
	if err != nil {
		return err
	}
	if docketTables != 2 || publicTables != 0 {
		return fmt.Errorf("goose left %d of goose_db_version and docket_runs in schema docket and %d tables in public", docketTables, publicTables)
	}
	return nil
}

// workOneRun enqueues one run and works it off with a Worker.
func workOneRun(ctx context.Context, client *docket.Client) error {
	if _, err := client.InsertRun(ctx, docket.NewRun{
		RunID:     "invoice-42",
		Scope:     docket.Tenant("acme"),
		GraphID:   "send-invoice",
		GraphHash: "v1",
		State:     json.RawMessage(`{"invoice": 42}`),
	}); err != nil {
		return err
	}
	verdict := make(chan docket.WorkerEvent, 1)
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: 1,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			return docket.Complete(json.RawMessage(`{"sent": true}`))
		},
		OnEvent: func(e docket.WorkerEvent) {
			if e.Kind == docket.EventVerdict {
				select {
				case verdict <- e:
				default:
				}
			}
		},
	})
	if err != nil {
		return err
	}
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(ctx) }()
	select {
	case e := <-verdict:
		if e.Outcome != docket.VerdictWritten {
			return fmt.Errorf("the verdict on %s was not written: %w", e.RunID, e.Err)
		}
	case err := <-ran:
		return fmt.Errorf("the worker stopped before the run was worked off: %w", errors.Join(err, ctx.Err()))
	}
	if err := worker.Stop(ctx); err != nil {
		return err
	}
	run, err := client.FetchRun(ctx, docket.Tenant("acme"), "invoice-42")
	if err != nil {
		return err
	}
	fmt.Printf("run %s is %s: %s\n", run.RunID, run.Status, run.State)
	return nil
}
