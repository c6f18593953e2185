package tests

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
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/internal/pgtest"
)

// The Worker sends its claim statement and the read of the runs it leased as
// one batch, which PostgreSQL runs as one implicit transaction: the claim
// notes its leases in a transaction-local setting and LeasedRuns reads them.

// crNoted runs one engine's noted claim statement on q and returns its
// leases (run id -> claim token and checkpoint_seq) and its poisoned run ids.
type crNoted func(t testing.TB, q *gen.Queries, now time.Time, demand int32) (map[string]crLease, []string)

// crLease is what a noted claim returned for one leased run.
type crLease struct {
	token uuid.UUID
	seq   int64
}

// crEngine is one engine whose noted claim statement is under test.
type crEngine struct {
	name  string
	env   func(t testing.TB) *clEnv
	claim crNoted
}

// crEngines are both engines with their noted claim statements.
var crEngines = []crEngine{
	{"tenant_fair", func(t testing.TB) *clEnv { return newClTenantFair(t, 10) },
		func(t testing.TB, q *gen.Queries, now time.Time, demand int32) (map[string]crLease, []string) {
			rows, err := q.TenantFairClaimNoted(testContext(t), gen.TenantFairClaimNotedParams{
				Now: now, Cutoff: now.Add(-clTTL), Demand: demand, MaxAttempts: clMaxAttempts})
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			return crOutcomes(t, rows, func(r gen.TenantFairClaimNotedRow) gen.LegacyClaimNotedRow { return gen.LegacyClaimNotedRow(r) })
		}},
	{"legacy", newClLegacy,
		func(t testing.TB, q *gen.Queries, now time.Time, demand int32) (map[string]crLease, []string) {
			rows, err := q.LegacyClaimNoted(testContext(t), gen.LegacyClaimNotedParams{
				Now: now, Cutoff: now.Add(-clTTL), Demand: demand, MaxAttempts: clMaxAttempts})
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			return crOutcomes(t, rows, func(r gen.LegacyClaimNotedRow) gen.LegacyClaimNotedRow { return r })
		}},
}

// crOutcomes splits outcome rows into leases and poisoned run ids.
func crOutcomes[R any](t testing.TB, rows []R, convert func(R) gen.LegacyClaimNotedRow) (map[string]crLease, []string) {
	t.Helper()
	leases := map[string]crLease{}
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
		leases[*row.RunID] = crLease{token: *row.ClaimToken, seq: *row.CheckpointSeq}
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
	for _, eng := range crEngines {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := eng.env(t)
			e.dueMany("a", "a", 3, clBase.Add(-time.Hour))
			e.due("b", "b-poison", clBase.Add(-time.Hour))
			e.setAttempts("b-poison", clMaxAttempts)
			e.claimed("b", "b-expired", clBase.Add(-2*clTTL), true)
			e.due("c", "c-later", clBase.Add(time.Hour))
			execSQL(t, e.pool, `update docket_runs set state = jsonb_build_object('run', run_id), step = 3`)

			ctx := testContext(t)
			tx, err := e.pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			q := gen.New(tx)
			leases, poisoned := eng.claim(t, q, clBase, 10)
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

			if again, poisonedAgain := eng.claim(t, q, clBase, 10); len(again) != 0 || len(poisonedAgain) != 0 {
				t.Fatalf("second claim took %v and poisoned %v, want nothing left", again, poisonedAgain)
			}
			if read, err := q.LeasedRuns(ctx); err != nil || len(read) != 0 {
				t.Fatalf("LeasedRuns after a claim that leased nothing: %d rows, %v; want none", len(read), err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if read, err := gen.New(e.pool).LeasedRuns(ctx); err != nil || len(read) != 0 {
				t.Fatalf("LeasedRuns outside the claim's transaction: %d rows, %v; want none", len(read), err)
			}
			if got := queryInt64(t, e.pool, `select count(*) from docket_runs where claim_token is not null`); got != 4 {
				t.Fatalf("%d runs hold a claim after commit, want the 4 leases", got)
			}
		})
	}
}

// crBatchRecorder is a pgx tracer that keeps the statements of every batch
// its pool sends, by the name sqlc gave each query.
type crBatchRecorder struct {
	mu      sync.Mutex
	batches [][]string
}

// TraceQueryStart does nothing: the Worker's claims are batches.
func (r *crBatchRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

// TraceQueryEnd does nothing.
func (r *crBatchRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart records the names of the batch's queries.
func (r *crBatchRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
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
func (r *crBatchRecorder) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (r *crBatchRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestWorkerClaimBatchInEveryQueryExecMode drains runs with the Worker in
// every pgx execution mode, with and without AsyncClaimCommit: each handler
// sees its run's stored state, every claim batch is exactly the expected
// statements, and the sessions keep their synchronous_commit.
func TestWorkerClaimBatchInEveryQueryExecMode(t *testing.T) {
	t.Parallel()
	for _, mode := range queryExecModes {
		for _, async := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/async=%v", mode, async), func(t *testing.T) {
				t.Parallel()
				crDrainAndCheck(t, mode, async)
			})
		}
	}
}

// crDrainAndCheck is one case of TestWorkerClaimBatchInEveryQueryExecMode.
func crDrainAndCheck(t *testing.T, mode pgx.QueryExecMode, async bool) {
	rec := &crBatchRecorder{}
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = acSessionSetting
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	clientCfg := tenantFairConfig(2)
	clientCfg.AsyncClaimCommit = async
	client := openClient(t, pool, clientCfg)
	ids := wkInsertRuns(t, client, 3, "cr-a", "cr-b")
	execSQL(t, pool, `update docket_runs set state = jsonb_build_object('run', run_id, 'text', 'ä"''')`)
	stored := map[string]string{}
	for _, id := range ids {
		var state string
		if err := pool.QueryRow(testContext(t), `select state::text from docket_runs where run_id = $1`, id).Scan(&state); err != nil {
			t.Fatal(err)
		}
		stored[id] = state
	}

	var mu sync.Mutex
	seen := map[string]string{}
	log := &wkLogRecorder{}
	events := newWkEvents()
	w, runResult := wkStartWorker(t, client, docket.WorkerConfig{
		Concurrency: 3, Logger: slog.New(log), OnEvent: events.hook,
		Handler: func(_ context.Context, job *docket.Job) docket.Result {
			mu.Lock()
			seen[job.RunID] = string(job.State)
			mu.Unlock()
			return docket.Complete(nil)
		},
	})
	events.waitWritten(t, "complete", ids...)
	wkStop(t, w, runResult)
	wkExpectQuiet(t, log)

	if !maps.Equal(seen, stored) {
		t.Errorf("handlers saw the states %v, want the stored %v", seen, stored)
	}
	wantBatch := []string{"TenantFairClaimNoted", "LeasedRuns"}
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
	crExpectSessionSetting(t, pool, int(cfg.MaxConns))
}

// crExpectSessionSetting requires every connection the pool opened to still
// run with acSessionSetting.
func crExpectSessionSetting(t *testing.T, pool *pgxpool.Pool, size int) {
	t.Helper()
	ctx := testContext(t)
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
		if got != acSessionSetting {
			t.Errorf("a session's synchronous_commit is %q after the drain, want %q", got, acSessionSetting)
		}
	}
}
