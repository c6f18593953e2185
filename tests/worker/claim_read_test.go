package worker

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The Worker sends its claim statement and the read of the runs it leased as
// one batch, which PostgreSQL runs as one implicit transaction: the claim
// notes its leases in a transaction-local setting and LeasedRuns reads them.

// noted runs one engine's noted claim statement on q and returns its
// leases (run id -> claim token and checkpoint_seq) and its poisoned run ids.
type noted func(t testing.TB, q *dbgen.Queries, now time.Time, demand int32) (map[string]lease, []string)

// lease is what a noted claim returned for one leased run.
type lease struct {
	token uuid.UUID
	seq   int64
}

// engine is one engine whose noted claim statement is under test.
type engine struct {
	name  string
	env   func(t testing.TB) *testkit.ClaimEnv
	claim noted
}

// engines are both engines with their noted claim statements.
var engines = []engine{
	{"tenant_fair", func(t testing.TB) *testkit.ClaimEnv { return testkit.NewClaimTenantFair(t, 10) },
		func(t testing.TB, q *dbgen.Queries, now time.Time, demand int32) (map[string]lease, []string) {
			rows, err := q.TenantFairClaimCombinedNoted(testkit.Context(t), dbgen.TenantFairClaimCombinedNotedParams{
				Now: now, Cutoff: now.Add(-testkit.ClaimTTL), Demand: demand, MaxAttempts: testkit.ClaimMaxAttempts})
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			return outcomes(t, rows, func(r dbgen.TenantFairClaimCombinedNotedRow) dbgen.LegacyClaimNotedRow {
				return dbgen.LegacyClaimNotedRow(r)
			})
		}},
	{"legacy", testkit.NewClaimLegacy,
		func(t testing.TB, q *dbgen.Queries, now time.Time, demand int32) (map[string]lease, []string) {
			rows, err := q.LegacyClaimNoted(testkit.Context(t), dbgen.LegacyClaimNotedParams{
				Now: now, Cutoff: now.Add(-testkit.ClaimTTL), Demand: demand, MaxAttempts: testkit.ClaimMaxAttempts})
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			return outcomes(t, rows, func(r dbgen.LegacyClaimNotedRow) dbgen.LegacyClaimNotedRow { return r })
		}},
}

// outcomes splits outcome rows into leases and poisoned run ids.
func outcomes[R any](t testing.TB, rows []R, convert func(R) dbgen.LegacyClaimNotedRow) (map[string]lease, []string) {
	t.Helper()
	leases := map[string]lease{}
	var poisoned []string
	for _, r := range rows {
		row := convert(r)
		if row.RowKind == nil || *row.RowKind != "outcome" {
			t.Fatalf("claim returned a row that is no outcome: %+v", row)
		}
		if row.ClaimToken == nil {
			poisoned = append(poisoned, *row.RunID)
			continue
		}
		leases[*row.RunID] = lease{token: *row.ClaimToken, seq: *row.CheckpointSeq}
	}
	return leases, poisoned
}

// TestClaimNotedReadsExactlyItsLeases claims, in one transaction, runs of
// every class (queued, expired, a poison, one not due) and requires
// LeasedRuns to return exactly the leased runs as the claim left them, a
// second claim of the transaction that leases nothing to clear the note, and
// nothing to be read once the transaction ended.
func TestClaimNotedReadsExactlyItsLeases(t *testing.T) {
	t.Parallel()
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := eng.env(t)
			e.DueMany("a", "a", 3, testkit.ClaimBase.Add(-time.Hour))
			e.Due("b", "b-poison", testkit.ClaimBase.Add(-time.Hour))
			e.SetAttempts("b-poison", testkit.ClaimMaxAttempts)
			e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*testkit.ClaimTTL), true)
			e.Due("c", "c-later", testkit.ClaimBase.Add(time.Hour))
			testkit.ExecSQL(t, e.Pool, `update docket_runs set state = jsonb_build_object('run', run_id), step = 3`)

			ctx := testkit.Context(t)
			tx, err := e.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			q := dbgen.New(tx)
			leases, poisoned := eng.claim(t, q, testkit.ClaimBase, 10)
			wantLeased := []string{"a-1", "a-2", "a-3", "b-expired"}
			if got := slices.Sorted(func(yield func(string) bool) {
				for id := range leases {
					if !yield(id) {
						return
					}
				}
			}); !slices.Equal(got, wantLeased) || !slices.Equal(poisoned, []string{"b-poison"}) {
				t.Fatalf("claim leased %v and poisoned %v, want %v and [b-poison]", got, poisoned, wantLeased)
			}
			read, err := q.LeasedRuns(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var readIDs []string
			for _, r := range read {
				readIDs = append(readIDs, r.RunID)
				lease := leases[r.RunID]
				if r.Status != "running" || r.ClaimToken == nil || *r.ClaimToken != lease.token ||
					r.CheckpointSeq != lease.seq || r.Step != 3 ||
					string(r.State) != fmt.Sprintf(`{"run": %q}`, r.RunID) {
					t.Errorf("read %+v (state %s), want the lease %+v with its stored state and step", r, r.State, lease)
				}
			}
			slices.Sort(readIDs)
			if !slices.Equal(readIDs, wantLeased) {
				t.Fatalf("LeasedRuns read %v, want %v", readIDs, wantLeased)
			}

			if again, poisonedAgain := eng.claim(t, q, testkit.ClaimBase, 10); len(again) != 0 || len(poisonedAgain) != 0 {
				t.Fatalf("second claim took %v and poisoned %v, want nothing left", again, poisonedAgain)
			}
			if read, err := q.LeasedRuns(ctx); err != nil || len(read) != 0 {
				t.Fatalf("LeasedRuns after a claim that leased nothing: %d rows, %v; want none", len(read), err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if read, err := dbgen.New(e.Pool).LeasedRuns(ctx); err != nil || len(read) != 0 {
				t.Fatalf("LeasedRuns outside the claim's transaction: %d rows, %v; want none", len(read), err)
			}
			if got := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where claim_token is not null`); got != 4 {
				t.Fatalf("%d runs hold a claim after commit, want the 4 leases", got)
			}
		})
	}
}

// batchRecorder is a pgx tracer that keeps the statements of every batch
// its pool sends, by the name sqlc gave each query.
type batchRecorder struct {
	mu      sync.Mutex
	batches [][]string
}

// TraceQueryStart does nothing: the Worker's claims are batches.
func (r *batchRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

// TraceQueryEnd does nothing.
func (r *batchRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart records the names of the batch's queries.
func (r *batchRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	var names []string
	for _, q := range data.Batch.QueuedQueries {
		name, _, _ := strings.Cut(strings.TrimPrefix(q.SQL, "-- name: "), " ")
		names = append(names, name)
	}
	r.mu.Lock()
	r.batches = append(r.batches, names)
	r.mu.Unlock()
	return ctx
}

// TraceBatchQuery does nothing.
func (r *batchRecorder) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (r *batchRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestWorkerClaimBatchInEveryQueryExecMode drains runs with the Worker in
// every pgx execution mode, with and without AsyncClaimCommit: each handler
// sees its run's stored state, every claim batch is exactly the expected
// statements, and the sessions keep their synchronous_commit.
func TestWorkerClaimBatchInEveryQueryExecMode(t *testing.T) {
	t.Parallel()
	for _, mode := range testkit.QueryExecModes {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", mode, async), func(t *testing.T) {
				t.Parallel()
				drainAndCheck(t, mode, async)
			})
		}
	}
}

// drainAndCheck is one case of TestWorkerClaimBatchInEveryQueryExecMode.
func drainAndCheck(t *testing.T, mode pgx.QueryExecMode, async bool) {
	rec := &batchRecorder{}
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = testkit.SessionSetting
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	clientCfg := testkit.TenantFairConfig(2)
	clientCfg.Tuning.AsyncClaimCommit = async
	client := testkit.OpenClient(t, pool, clientCfg)
	ids := testkit.WorkerInsertRuns(t, client, 3, "cr-a", "cr-b")
	testkit.ExecSQL(t, pool, `update docket_runs set state = jsonb_build_object('run', run_id, 'text', 'ä"''')`)
	stored := map[string]string{}
	for _, id := range ids {
		var state string
		if err := pool.QueryRow(testkit.Context(t), `select state::text from docket_runs where run_id = $1`, id).Scan(&state); err != nil {
			t.Fatal(err)
		}
		stored[id] = state
	}

	var mu sync.Mutex
	seen := map[string]string{}
	log := &testkit.WorkerLogRecorder{}
	events := testkit.NewWorkerEvents()
	w, runResult := testkit.StartWorker(t, client, docket.WorkerConfig{
		Concurrency: 3, Logger: slog.New(log), OnEvent: events.Hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			mu.Lock()
			seen[job.RunID] = string(job.State)
			mu.Unlock()
			return docket.Complete(nil)
		},
	})
	events.WaitWritten(t, "complete", ids...)
	testkit.StopWorker(t, w, runResult)
	testkit.WorkerExpectQuiet(t, log)

	if !maps.Equal(seen, stored) {
		t.Errorf("handlers saw the states %v, want the stored %v", seen, stored)
	}
	// A TenantFair Worker combines its claims; with one Worker no call ever waits, so every claim is one batch.
	wantBatch := []string{"TenantFairClaimCombinedNoted", "LeasedRuns"}
	if async {
		wantBatch = append([]string{"CommitClaimAsynchronously"}, wantBatch...)
	}
	rec.mu.Lock()
	batches := rec.batches
	rec.mu.Unlock()
	if len(batches) == 0 {
		t.Fatal("the worker sent no claim batch")
	}
	for _, b := range batches {
		if !slices.Equal(b, wantBatch) {
			t.Errorf("batch %v, want every batch to be the claim batch %v", b, wantBatch)
		}
	}
	expectSessionSetting(t, pool, int(cfg.MaxConns))
}

// expectSessionSetting requires every connection the pool opened to still
// run with testkit.SessionSetting.
func expectSessionSetting(t *testing.T, pool *pgxpool.Pool, size int) {
	t.Helper()
	ctx := testkit.Context(t)
	var held []*pgxpool.Conn
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for range min(size, int(pool.Stat().TotalConns())) {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var got string
		if err := c.QueryRow(ctx, "show synchronous_commit").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != testkit.SessionSetting {
			t.Errorf("a session's synchronous_commit is %q after the drain, want %q", got, testkit.SessionSetting)
		}
	}
}
