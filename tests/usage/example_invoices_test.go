package usage

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/examples/invoices"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The example app embeds Docket in the documented layout (its pool's
// search_path names only app and public, Docket lives in schema docket):
// its own sqlc query joins its invoices to docket_runs, an invoice and its
// run land in one transaction or not at all, and the join follows the run
// through its lifecycle, in every pgx execution mode and behind PgBouncer's
// transaction pooling.
func TestExampleInvoicesAppEmbedsTheRepository(t *testing.T) {
	t.Parallel()
	testkit.EveryAppPool(t, invoicesDatabase, func(t *testing.T, app, _ *pgxpool.Pool) { exerciseInvoices(t, app) })
}

// invoicesDatabase is a database laid out as the example app expects:
// Docket migrated into schema docket, the app's own migration applied in
// schema app.
func invoicesDatabase(t *testing.T) string {
	t.Helper()
	databaseURL := pgtest.NewEmptyDatabase(t)
	app := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, databaseURL, testkit.AppSearchPath))
	if err := testkit.PoolMigrator(t, app, docket.MigratorConfig{Schema: "docket"}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	own, err := os.ReadFile("../../examples/invoices/db/schema/20250101000000_invoices.sql")
	if err != nil {
		t.Fatal(err)
	}
	testkit.ExecSQL(t, app, "create schema app;\n"+string(own))
	if got := testkit.QueryInt64(t, app, `select count(*) from pg_tables where schemaname = 'app' and tablename = 'invoices'`); got != 1 {
		t.Fatalf("the app's table is not in schema app")
	}
	return databaseURL
}

// exerciseInvoices runs the example app on pool, whose search_path lacks
// Docket's schema.
func exerciseInvoices(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	cfg := testkit.TenantFairConfig(4)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, pool, cfg)
	app := invoices.New(pool, client)
	for id := range int64(2) {
		if err := app.CreateInvoice(testkit.Context(t), "acme", id+1, "Ada", 1200); err != nil {
			t.Fatalf("create invoice %d: %v", id+1, err)
		}
	}
	if err := app.CreateInvoice(testkit.Context(t), "acme", 1, "Bob", 5); err == nil {
		t.Fatal("a duplicate invoice was accepted")
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket.docket_runs`); got != 2 {
		t.Fatalf("%d runs after a refused invoice, want 2: the refused one must leave no run", got)
	}
	res, err := client.ClaimDue(testkit.Context(t), docket.ClaimRequest{Now: time.Now(), Limit: 1, ClaimTTL: time.Minute, MaxClaimAttempts: 3})
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != "invoice-1" {
		t.Fatalf("claim: %+v, %v", res, err)
	}
	if _, err := client.Commit(testkit.Context(t), docket.CommitRequest{Holder: res.Leases[0].Holder(), ExpectedSeq: res.Leases[0].CheckpointSeq,
		Step: 3, State: json.RawMessage(`{"sent": true}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatal(err)
	}
	rows, err := app.Statuses(testkit.Context(t), "acme")
	if err != nil {
		t.Fatal(err)
	}
	type status struct {
		id     int64
		status string
		step   int32
	}
	var got []status
	for _, r := range rows {
		got = append(got, status{r.ID, *r.RunStatus, *r.RunStep})
	}
	want := []status{{1, "done", 3}, {2, "running", 0}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("statuses %+v, want %+v", got, want)
	}
	var path string
	if err := pool.QueryRow(testkit.Context(t), `show search_path`).Scan(&path); err != nil || (path != "app,public" && path != "app, public") {
		t.Fatalf("the app's search_path after the app's calls = %q, %v", path, err)
	}
}
