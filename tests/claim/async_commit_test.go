package claim

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Config.Tuning.AsyncClaimCommit: ClaimDue sends the claim statement in one batch
// right after a local set_config that turns synchronous_commit off, so the
// setting holds for the batch's one implicit transaction and its commit. It
// must claim exactly what the default statement claims, leave the session's
// setting alone, and never reach ClaimDueTx or the trace calls, in every pgx
// execution mode.

// setConfig is what the statement queued before the asynchronous claim
// contains and no statement of any other claim call may.
const setConfig = "set_config('synchronous_commit', 'off', true)"

// claimSQL recognizes a statement that calls a claim function.
var claimSQL = regexp.MustCompile(`docket_(tenant_fair|legacy)_claim(_combined)?\(`)

// engine is one engine under test: its configuration and a backlog that
// exercises every class it has.
type engine struct {
	name    string
	config  docket.Config
	backlog func(e *testkit.ClaimEnv)
}

// engines are both engines. Their backlogs make the calls mix ready and
// expired leases and a poison; the TenantFair caps (3) bind, so it also
// mixes reacquisitions and promotions and ends with runs no call can take.
var engines = []engine{
	{"legacy", testkit.LegacyConfig(), func(e *testkit.ClaimEnv) {
		e.DueMany("a", "a", 5, testkit.ClaimBase.Add(-time.Hour))
		e.DueMany("b", "b", 3, testkit.ClaimBase.Add(-50*time.Minute))
		e.DueMany("", "n", 2, testkit.ClaimBase.Add(-55*time.Minute))
		e.Due("c", "c-later", testkit.ClaimBase.Add(time.Hour))
		e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*time.Hour), false)
		e.Claimed("a", "a-live", testkit.ClaimBase.Add(-time.Minute), false)
		e.SetAttempts("b-2", testkit.ClaimMaxAttempts)
	}},
	{"tenant_fair", testkit.TenantFairConfig(3), func(e *testkit.ClaimEnv) {
		e.DueMany("a", "a", 5, testkit.ClaimBase.Add(-time.Hour))
		e.DueMany("b", "b", 3, testkit.ClaimBase.Add(-50*time.Minute))
		e.DueMany("c", "c", 4, testkit.ClaimBase.Add(-55*time.Minute))
		e.Due("d", "d-later", testkit.ClaimBase.Add(time.Hour))
		e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
		e.Claimed("a", "a-live", testkit.ClaimBase.Add(-time.Minute), true)
		e.MarkAdmitted("c-1")
		e.SetAttempts("c-2", testkit.ClaimMaxAttempts)
	}},
}

// statement is one statement a pool sent.
type statement struct {
	sql  string
	args []any
}

// trip is one round trip a pool sent that calls a claim function: a
// statement of its own, or every statement of a batch in queue order.
type trip struct {
	batch bool
	stmts []statement
}

// recorder is a pgx tracer that keeps the round trips of its pool that
// call a claim function.
type recorder struct {
	mu    sync.Mutex
	trips []trip
}

// keep records trip when one of its statements calls a claim function.
func (r *recorder) keep(trip trip) {
	for _, st := range trip.stmts {
		if claimSQL.MatchString(st.sql) {
			r.mu.Lock()
			r.trips = append(r.trips, trip)
			r.mu.Unlock()
			return
		}
	}
}

// TraceQueryStart records a claim statement sent on its own.
func (r *recorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.keep(trip{stmts: []statement{{sql: data.SQL, args: slices.Clone(data.Args)}}})
	return ctx
}

// TraceQueryEnd does nothing.
func (r *recorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart records a batch that calls a claim function.
func (r *recorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	trip := trip{batch: true}
	for _, q := range data.Batch.QueuedQueries {
		trip.stmts = append(trip.stmts, statement{sql: q.SQL, args: slices.Clone(q.Arguments)})
	}
	r.keep(trip)
	return ctx
}

// TraceBatchQuery does nothing.
func (r *recorder) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd does nothing.
func (r *recorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// take returns the round trips recorded since the last take.
func (r *recorder) take() []trip {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.trips
	r.trips = nil
	return out
}

// one returns the only round trip of a call, failing the test unless
// there is exactly one, it holds exactly one claim statement, which is a
// single statement without the set_config, and either (async) it is a batch
// whose claim statement comes right after the local set_config, or none of
// its statements sets synchronous_commit.
func one(t testing.TB, what string, trips []trip, async bool) trip {
	t.Helper()
	if len(trips) != 1 {
		t.Fatalf("%s sent %d round trips that claim, want 1", what, len(trips))
	}
	trip := trips[0]
	claim := -1
	for i, st := range trip.stmts {
		if !claimSQL.MatchString(st.sql) {
			continue
		}
		if claim >= 0 {
			t.Fatalf("%s: the round trip calls a claim function twice: %+v", what, trip.stmts)
		}
		claim = i
		if strings.Contains(st.sql, setConfig) || strings.Contains(st.sql, ";") {
			t.Fatalf("%s: the claim statement is not a single statement without the set_config:\n%s", what, st.sql)
		}
	}
	if !async {
		for _, st := range trip.stmts {
			if strings.Contains(st.sql, setConfig) {
				t.Fatalf("%s: the round trip sets synchronous_commit: %+v", what, trip.stmts)
			}
		}
		return trip
	}
	if !trip.batch || claim < 1 || !strings.Contains(trip.stmts[claim-1].sql, setConfig) {
		t.Fatalf("%s: not a batch that queues %s right before the claim: %+v", what, setConfig, trip.stmts)
	}
	for i, st := range trip.stmts {
		if i != claim-1 && strings.Contains(st.sql, setConfig) {
			t.Fatalf("%s: the batch sets synchronous_commit more than once: %+v", what, trip.stmts)
		}
	}
	return trip
}

// pool opens a pool of one connection in mode whose sessions run with
// testkit.SessionSetting and whose claim statements rec records.
func pool(t testing.TB, databaseURL string, mode pgx.QueryExecMode, rec *recorder) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = testkit.SessionSetting
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// async is cfg with AsyncClaimCommit on.
func async(cfg docket.Config) docket.Config {
	cfg.Tuning.AsyncClaimCommit = true
	return cfg
}

// outcomes renders a result without its claim tokens, which are random:
// the leases, then the poisons, in commit order.
func outcomes(res docket.ClaimResult) string {
	var b strings.Builder
	for _, l := range res.Leases {
		fmt.Fprintf(&b, "lease %s scope=%v class=%s attempt=%d seq=%d claimed=%s eligible=%s graph=%s/%s; ",
			l.RunID, l.Scope, l.Class, l.Attempt, l.CheckpointSeq, l.ClaimedAt.UTC().Format(time.RFC3339Nano),
			l.EligibleAt.UTC().Format(time.RFC3339Nano), l.GraphID, l.GraphHash)
	}
	for _, p := range res.Poisoned {
		fmt.Fprintf(&b, "poison %s scope=%v class=%s attempts=%d seq=%d poisoned=%s eligible=%s reason=%s; ",
			p.RunID, p.Scope, p.Class, p.Attempts, p.CheckpointSeq, p.PoisonedAt.UTC().Format(time.RFC3339Nano),
			p.EligibleAt.UTC().Format(time.RFC3339Nano), p.Reason)
	}
	return fmt.Sprintf("%d leases, %d poisons: %s", len(res.Leases), len(res.Poisoned), b.String())
}

// state is the claim-relevant state of a database without its random
// tokens or wall-clock stamps: every run, the cursor and the epochs.
func state(e *testkit.ClaimEnv) string {
	e.T.Helper()
	var runs string
	err := e.Pool.QueryRow(testkit.Context(e.T), `select coalesce(string_agg(format('%s|%s|%s|%s|%s|%s|%s',
			run_id, claim_token is not null, claimed_at, wake_at, tenant_admitted_at, claim_attempts, poisoned_at),
			';' order by run_id), '') from docket_runs`).Scan(&runs)
	if err != nil {
		e.T.Fatalf("state: %v", err)
	}
	return fmt.Sprintf("cursor=%d epochs=%v runs=%s", e.Cursor(), e.Epochs(), runs)
}

// The asynchronous statement claims exactly what the default one claims: two
// databases with the same backlog, the same sequence of calls, one through
// each client, give the same outcomes call by call (run ids, classes,
// attempts, poisons) and the same final state, down to the call that finds
// nothing left to claim.
func TestAsyncCommitClaimsTheSameOutcomes(t *testing.T) {
	t.Parallel()
	calls := []docket.ClaimRequest{
		testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferReady),
		testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferExpired),
		testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone),
		testkit.ClaimReq(testkit.ClaimBase, 3, docket.PreferNone),
		testkit.ClaimReq(testkit.ClaimBase, 16, docket.PreferNone),
		testkit.ClaimReq(testkit.ClaimBase, 16, docket.PreferNone),
		testkit.ClaimReq(testkit.ClaimBase.Add(2*time.Hour), 16, docket.PreferNone),
		testkit.ClaimReq(testkit.ClaimBase.Add(2*time.Hour), 16, docket.PreferNone),
	}
	for _, engine := range engines {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			envs := make([]*testkit.ClaimEnv, 2)
			for i, cfg := range []docket.Config{engine.config, async(engine.config)} {
				pool := pool(t, pgtest.NewDatabase(t), pgx.QueryExecModeCacheStatement, rec)
				envs[i] = &testkit.ClaimEnv{T: t, Pool: pool, Client: testkit.OpenClient(t, pool, cfg)}
				engine.backlog(envs[i])
			}
			ctx := testkit.Context(t)
			total, empty := 0, false
			for n, req := range calls {
				var got [2]string
				for i, e := range envs {
					res, err := e.Client.ClaimDue(ctx, req)
					if err != nil {
						t.Fatalf("call %d (async %v): %v", n, i == 1, err)
					}
					one(t, fmt.Sprintf("call %d (async %v)", n, i == 1), rec.take(), i == 1)
					got[i] = outcomes(res)
					if i == 0 {
						total += res.Outcomes()
						empty = empty || res.Outcomes() == 0
					}
				}
				if got[0] != got[1] {
					t.Fatalf("call %d %+v:\ndefault      %s\nasynchronous %s", n, req, got[0], got[1])
				}
			}
			if total < 10 || !empty {
				t.Fatalf("the calls made %d outcomes (empty call: %v); the backlog no longer exercises the engine", total, empty)
			}
			if def, async := state(envs[0]), state(envs[1]); def != async {
				t.Fatalf("final state differs:\ndefault      %s\nasynchronous %s", def, async)
			}
		})
	}
}

// On a pool of one connection, in every execution mode: the asynchronous
// ClaimDue sends the local set_config and the session's setting is the same
// after it (also after a call that claims nothing); the default client,
// ClaimDueTx of the asynchronous client (which leaves the caller's
// transaction setting alone) and its trace calls send no set_config.
func TestAsyncCommitIsLocalToTheClaimInEveryExecMode(t *testing.T) {
	t.Parallel()
	for _, engine := range engines {
		for _, mode := range testkit.QueryExecModes {
			t.Run(engine.name+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				checkLocal(t, engine, mode)
			})
		}
	}
}

// checkLocal is one engine and mode of
// TestAsyncCommitIsLocalToTheClaimInEveryExecMode.
func checkLocal(t *testing.T, engine engine, mode pgx.QueryExecMode) {
	ctx := testkit.Context(t)
	rec := &recorder{}
	pool := pool(t, pgtest.NewDatabase(t), mode, rec)
	async := testkit.OpenClient(t, pool, async(engine.config))
	def := testkit.OpenClient(t, pool, engine.config)
	e := &testkit.ClaimEnv{T: t, Pool: pool, Client: async}
	// Twelve runs in six tenants: a TenantFair cap of 2 never binds.
	for _, tenant := range []string{"a", "b", "c", "d", "e", "f"} {
		e.DueMany(tenant, tenant, 2, testkit.ClaimBase.Add(-time.Hour))
	}

	session := func(what string) {
		t.Helper()
		var got string
		if err := pool.QueryRow(ctx, "show synchronous_commit").Scan(&got); err != nil {
			t.Fatalf("show synchronous_commit %s: %v", what, err)
		}
		if got != testkit.SessionSetting {
			t.Fatalf("synchronous_commit %s = %q, want the session's %q", what, got, testkit.SessionSetting)
		}
	}
	claim := func(what string, client *docket.Client, asyncSQL bool, limit int) (docket.ClaimResult, trip) {
		t.Helper()
		res, err := client.ClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, limit, docket.PreferNone))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return res, one(t, what, rec.take(), asyncSQL)
	}

	session("before the asynchronous claim")
	if res, _ := claim("asynchronous ClaimDue", async, true, 2); res.Outcomes() != 2 {
		t.Fatalf("asynchronous ClaimDue: %d outcomes, want 2", res.Outcomes())
	}
	session("after the asynchronous claim")

	if res, _ := claim("default ClaimDue", def, false, 2); res.Outcomes() != 2 {
		t.Fatalf("default ClaimDue: %d outcomes, want 2", res.Outcomes())
	}
	session("after the default claim")

	// The caller's transaction, with a local setting of its own that the
	// claim must leave as it is.
	const callerSetting = "remote_write"
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	inTx := func(what string) {
		t.Helper()
		var got string
		if err := tx.QueryRow(ctx, "select current_setting('synchronous_commit')").Scan(&got); err != nil {
			t.Fatalf("current_setting %s: %v", what, err)
		}
		if got != callerSetting {
			t.Fatalf("synchronous_commit %s = %q, want the caller's %q", what, got, callerSetting)
		}
	}
	if _, err := tx.Exec(ctx, "set local synchronous_commit = "+callerSetting); err != nil {
		t.Fatalf("set local: %v", err)
	}
	inTx("in the caller's transaction before ClaimDueTx")
	res, err := async.ClaimDueTx(ctx, tx, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	if err != nil || res.Outcomes() != 2 {
		t.Fatalf("asynchronous client's ClaimDueTx: %d outcomes, %v", res.Outcomes(), err)
	}
	one(t, "asynchronous client's ClaimDueTx", rec.take(), false)
	inTx("in the caller's transaction after ClaimDueTx")
	if _, err := async.TraceClaimDueTx(ctx, tx, testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)); err != nil {
		t.Fatalf("asynchronous client's TraceClaimDueTx: %v", err)
	}
	one(t, "asynchronous client's TraceClaimDueTx", rec.take(), false)
	inTx("in the caller's transaction after TraceClaimDueTx")
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	session("after the caller's transaction")

	if _, err := async.TraceClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)); err != nil {
		t.Fatalf("asynchronous client's TraceClaimDue: %v", err)
	}
	one(t, "asynchronous client's TraceClaimDue", rec.take(), false)
	session("after the asynchronous client's trace")

	// Drain what is left, then a call that claims nothing.
	res, _ = claim("asynchronous ClaimDue of the rest", async, true, 16)
	if res.Outcomes() == 0 {
		t.Fatal("asynchronous ClaimDue of the rest claimed nothing")
	}
	res, empty := claim("asynchronous ClaimDue of nothing", async, true, 16)
	if res.Outcomes() != 0 {
		t.Fatalf("asynchronous ClaimDue of nothing: %d outcomes", res.Outcomes())
	}
	session("after an asynchronous claim of nothing")
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where claim_token is not null`); got != 12 {
		t.Fatalf("%d runs hold a claim, want all 12", got)
	}

	// The recorded batch, sent again with a read of the setting appended,
	// shows synchronous_commit off after the claim in the batch's implicit
	// transaction, so at its commit, whether the call claims nothing or not.
	setConfigRuns(t, pool, "claiming nothing", empty, 0)
	e.Due("g", "g-late", testkit.ClaimBase.Add(-time.Minute))
	setConfigRuns(t, pool, "claiming one run", empty, 1)
	session("after the batches sent again")
}

// setConfigRuns sends the recorded asynchronous claim batch again on pool,
// with a read of synchronous_commit appended, and checks that the claim
// returned outcomes rows and that the setting is off after it, in the
// batch's one implicit transaction, whose commit is the claim's.
func setConfigRuns(t *testing.T, pool *pgxpool.Pool, what string, trip trip, outcomes int) {
	t.Helper()
	ctx := testkit.Context(t)
	batch := &pgx.Batch{}
	for _, st := range trip.stmts {
		batch.Queue(st.sql, st.args...)
	}
	batch.Queue("select current_setting('synchronous_commit')")
	results := pool.SendBatch(ctx, batch)
	defer func() { _ = results.Close() }()
	n := 0
	for _, st := range trip.stmts {
		if !claimSQL.MatchString(st.sql) {
			if _, err := results.Exec(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			continue
		}
		rows, err := results.Query()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var got string
	if err := results.QueryRow().Scan(&got); err != nil {
		t.Fatalf("current_setting after %s: %v", what, err)
	}
	if err := results.Close(); err != nil {
		t.Fatalf("%s: commit: %v", what, err)
	}
	if n != outcomes || got != "off" {
		t.Fatalf("%s: %d rows, synchronous_commit %q; want %d rows and off", what, n, got, outcomes)
	}
}
