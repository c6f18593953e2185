package migration

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Unique runs in the app's own layout (Docket in schema docket through
// Config.Schema, the app's search_path without it), in every pgx execution
// mode and behind PgBouncer's transaction pooling: a duplicate insert
// returns the run that holds the key, through InsertRun, InsertRunTx and
// InsertRuns, never aborts the app's transaction, and the database's unique
// index holds against concurrent inserters and the generated repository.
func TestUniqueRunsInTheAppsLayout(t *testing.T) {
	t.Parallel()
	testkit.EveryAppPool(t, appLayoutDatabase, exerciseUniqueRuns)
}

// uniqueRun is a run of tenant acme with the unique key key (derived when
// "") and the covered statuses.
func uniqueRun(runID, key string, statuses ...docket.RunStatus) docket.NewRun {
	return docket.NewRun{
		RunID: runID, Scope: docket.Tenant("acme"), GraphID: "nightly-report", GraphHash: "v1",
		State:  json.RawMessage(`{}`),
		Unique: &docket.Uniqueness{Key: key, Statuses: statuses},
	}
}

// runsHolding counts the runs of acme that hold key.
func runsHolding(t *testing.T, pool *pgxpool.Pool, key string) int64 {
	t.Helper()
	return testkit.QueryInt64(t, pool, `select count(*) from docket.docket_runs where tenant_id = 'acme' and unique_key = $1`, key)
}

func exerciseUniqueRuns(t *testing.T, app, _ *pgxpool.Pool) {
	t.Helper()
	ctx := testkit.Context(t)
	cfg := testkit.TenantFairConfig(4)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, app, cfg)

	// InsertRun: the first insert takes the key, the second returns it.
	first, err := client.InsertRun(ctx, uniqueRun("daily-1", "daily"))
	if err != nil || first.RunID != "daily-1" || first.UniqueKey != "daily" || first.UniqueBucket != nil {
		t.Fatalf("first unique insert = %+v, %v", first, err)
	}
	again, err := client.InsertRun(ctx, uniqueRun("daily-2", "daily"))
	if !errors.Is(err, docket.ErrUniqueRunExists) || again.RunID != "daily-1" || again.Status != docket.StatusRunning {
		t.Fatalf("duplicate InsertRun = run %q (%s), %v; want daily-1 with ErrUniqueRunExists", again.RunID, again.Status, err)
	}

	// InsertRunTx: the duplicate leaves the app's transaction usable; its
	// next statement and its commit succeed.
	tx, err := app.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `insert into invoices (id, customer, amount_cents) values (1, 'Ada', 1200)`); err != nil {
		t.Fatal(err)
	}
	inTx, err := client.InsertRunTx(ctx, tx, uniqueRun("daily-3", "daily"))
	if !errors.Is(err, docket.ErrUniqueRunExists) || inTx.RunID != "daily-1" {
		t.Fatalf("duplicate InsertRunTx = run %q, %v; want daily-1 with ErrUniqueRunExists", inTx.RunID, err)
	}
	if _, err := tx.Exec(ctx, `insert into invoices (id, customer, amount_cents) values (2, 'Grace', 900)`); err != nil {
		t.Fatalf("a statement after the duplicate in the app's transaction: %v", err)
	}
	fresh, err := client.InsertRunTx(ctx, tx, uniqueRun("weekly-1", "weekly"))
	if err != nil || fresh.RunID != "weekly-1" {
		t.Fatalf("a new key in the app's transaction = %q, %v", fresh.RunID, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit after the duplicate: %v", err)
	}
	if n := testkit.QueryInt64(t, app, `select count(*) from invoices`); n != 2 {
		t.Fatalf("the app's transaction committed %d invoices, want 2", n)
	}

	// InsertRuns: two equal keys in one batch make one run; a key held
	// before the batch returns its holder; a run without a key goes in.
	ids, err := client.InsertRuns(ctx, []docket.NewRun{
		uniqueRun("hourly-1", "hourly"), uniqueRun("hourly-2", "hourly"),
		{RunID: "plain-1", Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)},
		uniqueRun("daily-4", "daily"),
	})
	var skipped *docket.UniqueRunsExistError
	if !errors.As(err, &skipped) || !errors.Is(err, docket.ErrUniqueRunExists) || !slices.Equal(skipped.Indexes, []int{1, 3}) {
		t.Fatalf("InsertRuns error = %v, want a UniqueRunsExistError at indexes [1 3]", err)
	}
	if want := []string{"hourly-1", "hourly-1", "plain-1", "daily-1"}; !slices.Equal(ids, want) {
		t.Fatalf("InsertRuns ids = %v, want %v", ids, want)
	}
	for key, want := range map[string]int64{"daily": 1, "hourly": 1, "weekly": 1} {
		if n := runsHolding(t, app, key); n != want {
			t.Fatalf("%d runs hold key %q, want %d", n, key, want)
		}
	}
	if n := testkit.QueryInt64(t, app, `select count(*) from docket.docket_runs where run_id in ('daily-2', 'daily-3', 'daily-4', 'hourly-2')`); n != 0 {
		t.Fatalf("%d duplicates were written", n)
	}
	// The same batch inside the app's transaction: everything is a
	// duplicate, and the transaction goes on.
	tx, err = app.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids, err = client.InsertRunsTx(ctx, tx, []docket.NewRun{uniqueRun("hourly-3", "hourly"), uniqueRun("daily-5", "daily")})
	if !errors.As(err, &skipped) || !slices.Equal(skipped.Indexes, []int{0, 1}) || !slices.Equal(ids, []string{"hourly-1", "daily-1"}) {
		t.Fatalf("InsertRunsTx of duplicates = %v, %v", ids, err)
	}
	if _, err := tx.Exec(ctx, `insert into invoices (id, customer, amount_cents) values (3, 'Edsger', 100)`); err != nil {
		t.Fatalf("a statement after the duplicate batch in the app's transaction: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	// A key derived from the graph id and the typed state: the same value,
	// whatever the order of its fields in the document, is the same key.
	type report struct {
		Day    string `json:"day"`
		Region string `json:"region"`
	}
	typed, err := docket.NewTypedRun(uniqueRun("derived-1", ""), report{Day: "2026-12-07", Region: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	derived, err := client.InsertRun(ctx, typed)
	if err != nil || len(derived.UniqueKey) != 64 {
		t.Fatalf("derived key insert = %q (key %q), %v", derived.RunID, derived.UniqueKey, err)
	}
	reordered := uniqueRun("derived-2", "")
	reordered.State = json.RawMessage(`{ "region": "eu", "day": "2026-12-07" }`)
	if got, err := client.InsertRun(ctx, reordered); !errors.Is(err, docket.ErrUniqueRunExists) || got.RunID != "derived-1" {
		t.Fatalf("the same state reordered = %q, %v; want derived-1 with ErrUniqueRunExists", got.RunID, err)
	}
	other, err := docket.NewTypedRun(uniqueRun("derived-3", ""), report{Day: "2026-12-08", Region: "eu"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := client.InsertRun(ctx, other); err != nil || got.RunID != "derived-3" {
		t.Fatalf("another state = %q, %v; want a new run", got.RunID, err)
	}

	// Once the holder finishes (the default covers running and waiting),
	// it gives the key up and a new insert takes it; a retry of the old run
	// brings it back without its key, so the lifecycle never meets the index.
	if res, err := client.Cancel(ctx, docket.Tenant("acme"), "daily-1"); err != nil || res.Run.UniqueKey != "" {
		t.Fatalf("cancel of the holder = %+v, %v; want its key given up", res.Run, err)
	}
	next, err := client.InsertRun(ctx, uniqueRun("daily-6", "daily"))
	if err != nil || next.RunID != "daily-6" {
		t.Fatalf("insert after the holder finished = %q, %v; want a new run", next.RunID, err)
	}
	retried, err := client.RetryRun(ctx, docket.Tenant("acme"), "daily-1", docket.RetryRunOptions{})
	if err != nil || retried.Status != docket.StatusRunning || retried.UniqueKey != "" {
		t.Fatalf("retry of the finished old holder = %+v, %v", retried, err)
	}

	// Covered statuses chosen by the insert: running alone gives the key up
	// when the run waits; running and cancelled keep it after a cancel.
	if _, err := client.InsertRun(ctx, uniqueRun("only-running-1", "only-running", docket.StatusRunning)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.MutateRun(ctx, docket.Tenant("acme"), "only-running-1", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusWaiting}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := client.InsertRun(ctx, uniqueRun("only-running-2", "only-running", docket.StatusRunning)); err != nil || got.RunID != "only-running-2" {
		t.Fatalf("insert while the holder waits, running covered alone = %q, %v; want a new run", got.RunID, err)
	}
	if _, err := client.InsertRun(ctx, uniqueRun("kept-1", "kept", docket.StatusRunning, docket.StatusCancelled)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Cancel(ctx, docket.Tenant("acme"), "kept-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := client.InsertRun(ctx, uniqueRun("kept-2", "kept", docket.StatusRunning, docket.StatusCancelled)); !errors.Is(err, docket.ErrUniqueRunExists) || got.RunID != "kept-1" || got.Status != docket.StatusCancelled {
		t.Fatalf("insert after a cancel the key covers = %q (%s), %v; want kept-1 with ErrUniqueRunExists", got.RunID, got.Status, err)
	}

	expectConcurrentUniqueInserts(t, ctx, app, client)
	expectUniqueIndexAgainstTheRepository(t, ctx, app, client)
}

// expectConcurrentUniqueInserts starts 16 inserters of one key at once, half
// through InsertRun and half through InsertRunTx in the app's own
// transactions: exactly one run is created and every inserter gets its id.
func expectConcurrentUniqueInserts(t *testing.T, ctx context.Context, app *pgxpool.Pool, client *docket.Client) {
	t.Helper()
	const inserters = 16
	start := make(chan struct{})
	type outcome struct {
		runID string
		err   error
	}
	outcomes := make([]outcome, inserters)
	var wg sync.WaitGroup
	for i := range inserters {
		wg.Go(func() {
			<-start
			run := uniqueRun("race-"+string(rune('a'+i)), "race")
			if i%2 == 0 {
				got, err := client.InsertRun(ctx, run)
				outcomes[i] = outcome{got.RunID, err}
				return
			}
			err := pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error {
				got, err := client.InsertRunTx(ctx, tx, run)
				outcomes[i] = outcome{got.RunID, err}
				if err != nil && !errors.Is(err, docket.ErrUniqueRunExists) {
					return err
				}
				// The transaction is still usable after a duplicate.
				_, err = tx.Exec(ctx, `select 1`)
				return err
			})
			if err != nil {
				outcomes[i] = outcome{err: err}
			}
		})
	}
	close(start)
	wg.Wait()
	if n := runsHolding(t, app, "race"); n != 1 {
		t.Fatalf("%d concurrent inserters of one key created %d runs, want 1", inserters, n)
	}
	var holder string
	if err := app.QueryRow(ctx, `select run_id from docket.docket_runs where unique_key = 'race'`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	created := 0
	for i, o := range outcomes {
		switch {
		case o.err == nil && o.runID == holder:
			created++
		case errors.Is(o.err, docket.ErrUniqueRunExists) && o.runID == holder:
		default:
			t.Fatalf("inserter %d got run %q, %v; want %q", i, o.runID, o.err, holder)
		}
	}
	if created != 1 {
		t.Fatalf("%d inserters report a created run, want 1", created)
	}
}

// expectUniqueIndexAgainstTheRepository inserts a held key through the
// generated repository, whose InsertRun and InsertUniqueRuns skip it at the
// unique index without raising, and through gen.InsertRuns and plain SQL,
// which the index refuses.
func expectUniqueIndexAgainstTheRepository(t *testing.T, ctx context.Context, app *pgxpool.Pool, client *docket.Client) {
	t.Helper()
	tenant, key := "acme", "hourly"
	batch := func(ids ...string) gen.InsertRunsParams {
		p := gen.InsertRunsParams{RunIds: ids, WakeAts: make([]time.Time, len(ids)), UniquePeriodsUs: make([]int64, len(ids)), UniqueStatuses: make([]string, len(ids))}
		for range ids {
			p.ScopeKeys, p.GraphIds, p.GraphHashes, p.States = append(p.ScopeKeys, "acme"), append(p.GraphIds, "g"), append(p.GraphHashes, "v1"), append(p.States, "{}")
		}
		return p
	}
	err := pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error {
		q := gen.New(client.SchemaDB(tx))
		_, err := q.InsertRun(ctx, gen.InsertRunParams{
			RunID: "gen-hourly", TenantID: &tenant, GraphID: "g", GraphHash: "v1", State: "{}", UniqueKey: &key,
		})
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Errorf("gen.InsertRun of a held key = %v, want no row", err)
		}
		skipping := batch("gen-hourly-1", "gen-fresh-1", "gen-fresh-2")
		skipping.UniqueKeys = []string{key, "gen-fresh", "gen-fresh"}
		inserted, err := q.InsertUniqueRuns(ctx, gen.InsertUniqueRunsParams(skipping))
		if err != nil || inserted != 1 {
			t.Errorf("gen.InsertUniqueRuns of a held key and two equal new ones inserted %d, %v; want 1", inserted, err)
		}
		// The app's transaction goes on.
		_, err = tx.Exec(ctx, `insert into invoices (id, customer, amount_cents) values (4, 'Barbara', 700)`)
		return err
	})
	if err != nil {
		t.Fatalf("the app's transaction around the generated repository: %v", err)
	}
	if n := runsHolding(t, app, key); n != 1 {
		t.Fatalf("%d runs hold %q after the generated repository's inserts, want 1", n, key)
	}
	if n := runsHolding(t, app, "gen-fresh"); n != 1 {
		t.Fatalf("%d runs hold gen-fresh, want 1", n)
	}

	// gen.InsertRuns, without the skip, fails at the index; RunWriteError
	// names it as the facade does.
	refused := batch("gen-hourly-2")
	refused.UniqueKeys = []string{key}
	err = pgx.BeginFunc(ctx, app, func(tx pgx.Tx) error {
		_, err := gen.New(client.SchemaDB(tx)).InsertRuns(ctx, refused)
		return err
	})
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "23505" || pgErr.ConstraintName != "docket_runs_unique_idx" ||
		!errors.Is(docket.RunWriteError(err), docket.ErrUniqueRunExists) {
		t.Fatalf("gen.InsertRuns of a held key = %v, want the unique index's refusal, ErrUniqueRunExists by RunWriteError", err)
	}
	_, err = app.Exec(ctx, `insert into docket.docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at, unique_key, unique_statuses)
		values ('sql-hourly', 'acme', 'g', 'v1', 'running', '{}', now(), $1, '{running}')`, key)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); !ok || pgErr.Code != "23505" || pgErr.ConstraintName != "docket_runs_unique_idx" {
		t.Fatalf("a plain insert of a held key = %v, want the unique index's refusal", err)
	}
	if n := runsHolding(t, app, key); n != 1 {
		t.Fatalf("%d runs hold %q after the refused inserts, want 1", n, key)
	}
}
