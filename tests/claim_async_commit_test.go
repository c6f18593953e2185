package tests

import (
	"context"
	"encoding/json"
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
	"github.com/docketrun/docket-go/internal/pgtest"
)

// Config.AsyncClaimCommit: ClaimDue sends the claim statement that turns
// synchronous_commit off for its own implicit transaction. It must claim
// exactly what the default statement claims, leave the session's setting
// alone, and never reach ClaimDueTx or the trace calls, in every pgx
// execution mode.

// acSetConfig is what the asynchronous claim statement contains and no other
// claim statement may.
const acSetConfig = "set_config('synchronous_commit', 'off', true)"

// acSessionSetting is the session's synchronous_commit on the test pools: a
// value that is neither the test server's ("off") nor the built-in default,
// so a leak or a reset would both show.
const acSessionSetting = "local"

// acClaimSQL recognizes a statement that calls a claim function.
var acClaimSQL = regexp.MustCompile(`docket_(tenant_fair|legacy)_claim\(`)

// acEngine is one engine under test: its configuration and a backlog that
// exercises every class it has.
type acEngine struct {
	name    string
	config  docket.Config
	backlog func(e *clEnv)
}

// acEngines are both engines. Their backlogs make the calls mix ready and
// expired leases and a poison; the TenantFair caps (3) bind, so it also
// mixes reacquisitions and promotions and ends with runs no call can take.
var acEngines = []acEngine{
	{"legacy", legacyConfig(), func(e *clEnv) {
		e.dueMany("a", "a", 5, clBase.Add(-time.Hour))
		e.dueMany("b", "b", 3, clBase.Add(-50*time.Minute))
		e.dueMany("", "n", 2, clBase.Add(-55*time.Minute))
		e.due("c", "c-later", clBase.Add(time.Hour))
		e.claimed("b", "b-expired", clBase.Add(-2*time.Hour), false)
		e.claimed("a", "a-live", clBase.Add(-time.Minute), false)
		e.setAttempts("b-2", clMaxAttempts)
	}},
	{"tenant_fair", tenantFairConfig(3), func(e *clEnv) {
		e.dueMany("a", "a", 5, clBase.Add(-time.Hour))
		e.dueMany("b", "b", 3, clBase.Add(-50*time.Minute))
		e.dueMany("c", "c", 4, clBase.Add(-55*time.Minute))
		e.due("d", "d-later", clBase.Add(time.Hour))
		e.claimed("b", "b-expired", clBase.Add(-2*time.Hour), true)
		e.claimed("a", "a-live", clBase.Add(-time.Minute), true)
		e.markAdmitted("c-1")
		e.setAttempts("c-2", clMaxAttempts)
	}},
}

// acStatement is one statement a pool sent.
type acStatement struct {
	sql  string
	args []any
}

// acRecorder is a pgx tracer that keeps the claim statements its pool sends.
type acRecorder struct {
	mu    sync.Mutex
	stmts []acStatement
}

// TraceQueryStart records a claim statement with its arguments.
func (r *acRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if acClaimSQL.MatchString(data.SQL) {
		r.mu.Lock()
		r.stmts = append(r.stmts, acStatement{sql: data.SQL, args: slices.Clone(data.Args)})
		r.mu.Unlock()
	}
	return ctx
}

// TraceQueryEnd does nothing.
func (r *acRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the claim statements recorded since the last take.
func (r *acRecorder) take() []acStatement {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.stmts
	r.stmts = nil
	return out
}

// acOne returns the only claim statement of a call, failing the test unless
// there is exactly one and it does (async) or does not contain the local
// set_config.
func acOne(t testing.TB, what string, stmts []acStatement, async bool) acStatement {
	t.Helper()
	if len(stmts) != 1 {
		t.Fatalf("%s sent %d claim statements, want 1", what, len(stmts))
	}
	if got := strings.Contains(stmts[0].sql, acSetConfig); got != async {
		t.Fatalf("%s: statement contains %s = %v, want %v:\n%s", what, acSetConfig, got, async, stmts[0].sql)
	}
	if async && strings.Contains(stmts[0].sql, ";") {
		t.Fatalf("%s: the asynchronous claim is more than one statement:\n%s", what, stmts[0].sql)
	}
	return stmts[0]
}

// acPool opens a pool of one connection in mode whose sessions run with
// acSessionSetting and whose claim statements rec records.
func acPool(t testing.TB, databaseURL string, mode pgx.QueryExecMode, rec *acRecorder) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = acSessionSetting
	cfg.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// acAsync is cfg with AsyncClaimCommit on.
func acAsync(cfg docket.Config) docket.Config {
	cfg.AsyncClaimCommit = true
	return cfg
}

// acOutcomes renders a result without its claim tokens, which are random:
// the leases, then the poisons, in commit order.
func acOutcomes(res docket.ClaimResult) string {
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

// acState is the claim-relevant state of a database without its random
// tokens or wall-clock stamps: every run, the cursor and the epochs.
func acState(e *clEnv) string {
	e.t.Helper()
	var runs string
	err := e.pool.QueryRow(testContext(e.t), `select coalesce(string_agg(format('%s|%s|%s|%s|%s|%s|%s',
			run_id, claim_token is not null, claimed_at, wake_at, tenant_admitted_at, claim_attempts, poisoned_at),
			';' order by run_id), '') from docket_runs`).Scan(&runs)
	if err != nil {
		e.t.Fatalf("state: %v", err)
	}
	return fmt.Sprintf("cursor=%d epochs=%v runs=%s", e.cursor(), e.epochs(), runs)
}

// The asynchronous statement claims exactly what the default one claims: two
// databases with the same backlog, the same sequence of calls, one through
// each client, give the same outcomes call by call (run ids, classes,
// attempts, poisons) and the same final state, down to the call that finds
// nothing left to claim.
func TestAsyncCommitClaimsTheSameOutcomes(t *testing.T) {
	t.Parallel()
	calls := []docket.ClaimRequest{
		clReq(clBase, 1, docket.PreferReady),
		clReq(clBase, 1, docket.PreferExpired),
		clReq(clBase, 1, docket.PreferNone),
		clReq(clBase, 3, docket.PreferNone),
		clReq(clBase, 16, docket.PreferNone),
		clReq(clBase, 16, docket.PreferNone),
		clReq(clBase.Add(2*time.Hour), 16, docket.PreferNone),
		clReq(clBase.Add(2*time.Hour), 16, docket.PreferNone),
	}
	for _, engine := range acEngines {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			rec := &acRecorder{}
			envs := make([]*clEnv, 2)
			for i, cfg := range []docket.Config{engine.config, acAsync(engine.config)} {
				pool := acPool(t, pgtest.NewDatabase(t), pgx.QueryExecModeCacheStatement, rec)
				envs[i] = &clEnv{t: t, pool: pool, client: openClient(t, pool, cfg)}
				engine.backlog(envs[i])
			}
			ctx := testContext(t)
			total, empty := 0, false
			for n, req := range calls {
				var got [2]string
				for i, e := range envs {
					res, err := e.client.ClaimDue(ctx, req)
					if err != nil {
						t.Fatalf("call %d (async %v): %v", n, i == 1, err)
					}
					acOne(t, fmt.Sprintf("call %d (async %v)", n, i == 1), rec.take(), i == 1)
					got[i] = acOutcomes(res)
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
			if def, async := acState(envs[0]), acState(envs[1]); def != async {
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
	for _, engine := range acEngines {
		for _, mode := range queryExecModes {
			t.Run(engine.name+"/"+mode.String(), func(t *testing.T) {
				t.Parallel()
				acCheckLocal(t, engine, mode)
			})
		}
	}
}

// acCheckLocal is one engine and mode of
// TestAsyncCommitIsLocalToTheClaimInEveryExecMode.
func acCheckLocal(t *testing.T, engine acEngine, mode pgx.QueryExecMode) {
	ctx := testContext(t)
	rec := &acRecorder{}
	pool := acPool(t, pgtest.NewDatabase(t), mode, rec)
	async := openClient(t, pool, acAsync(engine.config))
	def := openClient(t, pool, engine.config)
	e := &clEnv{t: t, pool: pool, client: async}
	// Twelve runs in six tenants: a TenantFair cap of 2 never binds.
	for _, tenant := range []string{"a", "b", "c", "d", "e", "f"} {
		e.dueMany(tenant, tenant, 2, clBase.Add(-time.Hour))
	}

	session := func(what string) {
		t.Helper()
		var got string
		if err := pool.QueryRow(ctx, "show synchronous_commit").Scan(&got); err != nil {
			t.Fatalf("show synchronous_commit %s: %v", what, err)
		}
		if got != acSessionSetting {
			t.Fatalf("synchronous_commit %s = %q, want the session's %q", what, got, acSessionSetting)
		}
	}
	claim := func(what string, client *docket.Client, asyncSQL bool, limit int) (docket.ClaimResult, acStatement) {
		t.Helper()
		res, err := client.ClaimDue(ctx, clReq(clBase, limit, docket.PreferNone))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return res, acOne(t, what, rec.take(), asyncSQL)
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
	res, err := async.ClaimDueTx(ctx, tx, clReq(clBase, 2, docket.PreferNone))
	if err != nil || res.Outcomes() != 2 {
		t.Fatalf("asynchronous client's ClaimDueTx: %d outcomes, %v", res.Outcomes(), err)
	}
	acOne(t, "asynchronous client's ClaimDueTx", rec.take(), false)
	inTx("in the caller's transaction after ClaimDueTx")
	if _, err := async.TraceClaimDueTx(ctx, tx, clReq(clBase, 1, docket.PreferNone)); err != nil {
		t.Fatalf("asynchronous client's TraceClaimDueTx: %v", err)
	}
	acOne(t, "asynchronous client's TraceClaimDueTx", rec.take(), false)
	inTx("in the caller's transaction after TraceClaimDueTx")
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	session("after the caller's transaction")

	if _, err := async.TraceClaimDue(ctx, clReq(clBase, 1, docket.PreferNone)); err != nil {
		t.Fatalf("asynchronous client's TraceClaimDue: %v", err)
	}
	acOne(t, "asynchronous client's TraceClaimDue", rec.take(), false)
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
	if got := queryInt64(t, pool, `select count(*) from docket_runs where claim_token is not null`); got != 12 {
		t.Fatalf("%d runs hold a claim, want all 12", got)
	}

	// The set_config runs even when the function returns no rows: inside an
	// explicit transaction (which the client never does) the local setting
	// outlives the statement and shows.
	acSetConfigRuns(t, pool, "claiming nothing", empty, 0)
	e.due("g", "g-late", clBase.Add(-time.Minute))
	acSetConfigRuns(t, pool, "claiming one run", empty, 1)
	session("after the explicit transactions")
}

// acSetConfigRuns runs the recorded asynchronous claim statement in an
// explicit transaction that it rolls back, and checks that it returned
// outcomes rows and that synchronous_commit is off in that transaction
// afterwards.
func acSetConfigRuns(t *testing.T, pool *pgxpool.Pool, what string, stmt acStatement, outcomes int) {
	t.Helper()
	ctx := testContext(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	rows, err := tx.Query(ctx, stmt.sql, stmt.args...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var got string
	if err := tx.QueryRow(ctx, "select current_setting('synchronous_commit')").Scan(&got); err != nil {
		t.Fatalf("current_setting after %s: %v", what, err)
	}
	if n != outcomes || got != "off" {
		t.Fatalf("%s: %d rows, synchronous_commit %q; want %d rows and off", what, n, got, outcomes)
	}
}

// The plan of the asynchronous statement evaluates the set_config first,
// whatever the function returns: a nested loop whose outer side is the
// one-row set_config and whose inner side is the claim function, which reads
// the outer row's column through LATERAL (so it cannot be the outer side).
func TestAsyncCommitPlanSetsConfigFirst(t *testing.T) {
	t.Parallel()
	for _, engine := range acEngines {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			rec := &acRecorder{}
			pool := acPool(t, pgtest.NewDatabase(t), pgx.QueryExecModeCacheStatement, rec)
			client := openClient(t, pool, acAsync(engine.config))
			if _, err := client.ClaimDue(ctx, clReq(clBase, 1, docket.PreferNone)); err != nil {
				t.Fatalf("claim: %v", err)
			}
			stmt := acOne(t, "asynchronous ClaimDue", rec.take(), true)
			var raw []byte
			if err := pool.QueryRow(ctx, "explain (verbose, costs off, format json) "+stmt.sql, stmt.args...).Scan(&raw); err != nil {
				t.Fatalf("explain: %v", err)
			}
			var plans []struct{ Plan acPlanNode }
			if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
				t.Fatalf("explain output %s: %v", raw, err)
			}
			loop := plans[0].Plan.find("Nested Loop")
			if loop == nil || len(loop.Plans) != 2 {
				t.Fatalf("no nested loop of two sides in the plan:\n%s", raw)
			}
			outer, inner := loop.Plans[0], loop.Plans[1]
			if outer.ParentRelationship != "Outer" || !strings.Contains(strings.Join(outer.Output, ","), "set_config('synchronous_commit'") ||
				outer.find("Function Scan") != nil {
				t.Fatalf("the outer side does not produce the set_config row:\n%s", raw)
			}
			fn := inner.find("Function Scan")
			if inner.ParentRelationship != "Inner" || fn == nil || !strings.HasPrefix(fn.FunctionName, "docket_") ||
				!strings.Contains(fn.FunctionCall, "IS NULL") {
				t.Fatalf("the inner side is not the claim function reading the set_config row:\n%s", raw)
			}
		})
	}
}

// acPlanNode is the part of an EXPLAIN (FORMAT JSON) node the plan check reads.
type acPlanNode struct {
	NodeType           string       `json:"Node Type"`
	ParentRelationship string       `json:"Parent Relationship"`
	Output             []string     `json:"Output"`
	FunctionName       string       `json:"Function Name"`
	FunctionCall       string       `json:"Function Call"`
	Plans              []acPlanNode `json:"Plans"`
}

// find returns the first node of nodeType in n's subtree, depth first.
func (n *acPlanNode) find(nodeType string) *acPlanNode {
	if n.NodeType == nodeType {
		return n
	}
	for i := range n.Plans {
		if found := n.Plans[i].find(nodeType); found != nil {
			return found
		}
	}
	return nil
}
