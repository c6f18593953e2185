package usage

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/dockettest"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// recorder is a dockettest.TB that records failures instead of ending
// the test, so a test can assert what a helper reports.
type recorder struct {
	helpers  int
	failures []string
}

func (r *recorder) Helper() { r.helpers++ }

func (r *recorder) Fatalf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// fails runs check against a fresh recorder and fails t unless it
// reported exactly want (as one failure), marking itself a helper.
func fails(t *testing.T, what, want string, check func(tb dockettest.TB)) {
	t.Helper()
	r := &recorder{}
	check(r)
	if !slices.Equal(r.failures, []string{want}) {
		t.Errorf("%s reported %q\nwant %q", what, r.failures, want)
	}
	if r.helpers == 0 {
		t.Errorf("%s never called Helper", what)
	}
}

// failsWith is fails for a failure that must start with prefix.
func failsWith(t *testing.T, what, prefix string, check func(tb dockettest.TB)) {
	t.Helper()
	r := &recorder{}
	check(r)
	if len(r.failures) != 1 || !strings.HasPrefix(r.failures[0], prefix) {
		t.Errorf("%s reported %q\nwant one failure starting %q", what, r.failures, prefix)
	}
}

// passes runs check against a fresh recorder and fails t if it reported
// anything.
func passes(t *testing.T, what string, check func(tb dockettest.TB)) {
	t.Helper()
	r := &recorder{}
	check(r)
	if len(r.failures) > 0 {
		t.Errorf("%s failed: %q", what, r.failures)
	}
}

// run is a run of graph "dt-graph" with state.
func run(runID, tenant, graph, state string) docket.NewRun {
	return docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: graph, GraphHash: "v1", State: json.RawMessage(state)}
}

func TestDockettestRequireInserted(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	if _, err := client.InsertRun(ctx, run("dt-1", "acme", "dt-graph", `{"a": 1, "b": [1, 2]}`)); err != nil {
		t.Fatal(err)
	}
	full := dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-1", GraphID: "dt-graph", GraphHash: "v1",
		Status: docket.StatusRunning, Step: dockettest.Step(0), State: json.RawMessage(`{"b":[1,2.0],  "a":1}`)}

	var got docket.Run
	passes(t, "every field through the client", func(tb dockettest.TB) { got = dockettest.RequireInserted(ctx, tb, client, full) })
	if got.RunID != "dt-1" || got.Scope != docket.Tenant("acme") || got.Status != docket.StatusRunning || string(got.State) != `{"a": 1, "b": [1, 2]}` || got.CheckpointSeq != 0 {
		t.Fatalf("RequireInserted returned %+v", got)
	}
	passes(t, "every field through the pool", func(tb dockettest.TB) { dockettest.RequireInserted(ctx, tb, pool, full) })
	passes(t, "by graph", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), GraphID: "dt-graph", Status: docket.StatusRunning})
	})

	fails(t, "a missing run", `dockettest: run "dt-missing" (tenant:acme) was not inserted`, func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, client, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-missing"})
	})
	fails(t, "another scope", "dockettest: run \"dt-1\" (tenant:beta) differs from the expectation:\n"+
		"    run \"dt-1\" (tenant:acme):\n"+
		"      scope: got tenant:acme, want tenant:beta", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, client, dockettest.Expect{Scope: docket.Tenant("beta"), RunID: "dt-1"})
	})
	fails(t, "every field wrong", "dockettest: run \"dt-1\" (tenant:acme) differs from the expectation:\n"+
		"    run \"dt-1\" (tenant:acme):\n"+
		"      graph id: got \"dt-graph\", want \"other-graph\"\n"+
		"      graph hash: got \"v1\", want \"v2\"\n"+
		"      status: got running, want done\n"+
		"      step: got 0, want 3\n"+
		"      state: got {\"a\":1,\"b\":[1,2]}, want {\"a\":2}", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-1", GraphID: "other-graph",
			GraphHash: "v2", Status: docket.StatusDone, Step: dockettest.Step(3), State: json.RawMessage(`{"a": 2}`)})
	})
	fails(t, "a graph without runs", `dockettest: a run of graph "nope" (tenant:acme) was not inserted`, func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), GraphID: "nope"})
	})
	fails(t, "a graph whose runs differ", "dockettest: a run of graph \"dt-graph\" (tenant:acme) differs from the expectation:\n"+
		"    run \"dt-1\" (tenant:acme):\n"+
		"      status: got running, want waiting", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), GraphID: "dt-graph", Status: docket.StatusWaiting})
	})
	fails(t, "no run named", "dockettest: RequireInserted: an expectation needs a RunID or a GraphID", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme")})
	})
	fails(t, "a state that is not JSON", "dockettest: RequireInserted: the expected State of run \"dt-1\" (tenant:acme) is not JSON: {a", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-1", State: json.RawMessage(`{a`)})
	})
	var noClient *docket.Client
	fails(t, "a nil client", "dockettest: RequireInserted: no database: pass a pool, a client or a transaction", func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, noClient, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-1"})
	})

	passes(t, "not inserted: another run id", func(tb dockettest.TB) {
		dockettest.RequireNotInserted(ctx, tb, client, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-2"})
	})
	passes(t, "not inserted: the run in another status", func(tb dockettest.TB) {
		dockettest.RequireNotInserted(ctx, tb, client, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-1", Status: docket.StatusDone})
	})
	passes(t, "not inserted: the run in another scope", func(tb dockettest.TB) {
		dockettest.RequireNotInserted(ctx, tb, client, dockettest.Expect{Scope: docket.Tenant("beta"), RunID: "dt-1"})
	})
	fails(t, "not inserted, but it was", `dockettest: run "dt-1" (tenant:acme) was inserted, want none: matching run(s) "dt-1"`, func(tb dockettest.TB) {
		dockettest.RequireNotInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-1", Status: docket.StatusRunning})
	})
	fails(t, "no run of the graph, but there is", `dockettest: a run of graph "dt-graph" (tenant:acme) was inserted, want none: matching run(s) "dt-1"`, func(tb dockettest.TB) {
		dockettest.RequireNotInserted(ctx, tb, pool, dockettest.Expect{Scope: docket.Tenant("acme"), GraphID: "dt-graph"})
	})
}

// Inside the app's transaction the helpers see its uncommitted inserts;
// outside it they do not, and after a rollback nothing is there.
func TestDockettestRequireInsertedTx(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := client.InsertRunsTx(ctx, tx, []docket.NewRun{
		run("dt-tx-1", "acme", "dt-graph", `{}`), run("dt-tx-2", "beta", "dt-graph", `{"n": 2}`),
	}); err != nil {
		t.Fatal(err)
	}
	expect := dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-tx-1", Status: docket.StatusRunning}
	passes(t, "inside the transaction", func(tb dockettest.TB) { dockettest.RequireInsertedTx(ctx, tb, tx, expect) })
	passes(t, "many inside the transaction", func(tb dockettest.TB) {
		dockettest.RequireManyInsertedTx(ctx, tb, tx, []dockettest.Expect{expect, {Scope: docket.Tenant("beta"), GraphID: "dt-graph", State: json.RawMessage(`{"n":2}`)}})
	})
	fails(t, "inside the transaction, another status", "dockettest: run \"dt-tx-1\" (tenant:acme) differs from the expectation:\n"+
		"    run \"dt-tx-1\" (tenant:acme):\n"+
		"      status: got running, want done", func(tb dockettest.TB) {
		dockettest.RequireInsertedTx(ctx, tb, tx, dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-tx-1", Status: docket.StatusDone})
	})
	fails(t, "many inside the transaction, one missing", "dockettest: the 1 run(s) of tenant:acme, in insert order, differ from the 2 expectation(s):\n"+
		"  index 1: missing, want run \"dt-tx-3\" (tenant:acme)", func(tb dockettest.TB) {
		dockettest.RequireManyInsertedTx(ctx, tb, tx, []dockettest.Expect{expect, {Scope: docket.Tenant("acme"), RunID: "dt-tx-3"}})
	})
	fails(t, "a nil transaction", "dockettest: RequireInserted: no database: pass a pool, a client or a transaction", func(tb dockettest.TB) {
		dockettest.RequireInsertedTx(ctx, tb, nil, expect)
	})
	fails(t, "outside the uncommitted transaction", `dockettest: run "dt-tx-1" (tenant:acme) was not inserted`, func(tb dockettest.TB) {
		dockettest.RequireInserted(ctx, tb, client, expect)
	})
	passes(t, "not inserted outside the transaction", func(tb dockettest.TB) { dockettest.RequireNotInserted(ctx, tb, pool, expect) })
	fails(t, "not inserted inside the transaction", `dockettest: run "dt-tx-1" (tenant:acme) was inserted, want none: matching run(s) "dt-tx-1"`, func(tb dockettest.TB) {
		dockettest.RequireNotInsertedTx(ctx, tb, tx, expect)
	})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	passes(t, "not inserted after the rollback", func(tb dockettest.TB) { dockettest.RequireNotInserted(ctx, tb, client, expect) })
}

// RequireManyInserted compares the runs of the named scopes with the list
// in insert order, one to one.
func TestDockettestRequireManyInserted(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(2))
	if _, err := client.InsertRuns(ctx, []docket.NewRun{
		run("dt-m-1", "acme", "g1", `{}`), run("dt-m-2", "beta", "g2", `{}`), run("dt-m-3", "acme", "g1", `{"x": 1}`),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.InsertRun(ctx, run("dt-m-other", "gamma", "g1", `{}`)); err != nil {
		t.Fatal(err)
	}
	acme, beta := docket.Tenant("acme"), docket.Tenant("beta")
	inOrder := []dockettest.Expect{
		{Scope: acme, RunID: "dt-m-1", GraphID: "g1"},
		{Scope: beta, GraphID: "g2"},
		{Scope: acme, GraphID: "g1", State: json.RawMessage(`{"x": 1}`)},
	}
	var got []docket.Run
	passes(t, "the exact list in insert order", func(tb dockettest.TB) { got = dockettest.RequireManyInserted(ctx, tb, client, inOrder) })
	if ids := []string{got[0].RunID, got[1].RunID, got[2].RunID}; !slices.Equal(ids, []string{"dt-m-1", "dt-m-2", "dt-m-3"}) || len(got) != 3 {
		t.Fatalf("RequireManyInserted returned %v", ids)
	}
	fails(t, "another order", "dockettest: the 3 run(s) of tenant:acme, tenant:beta, in insert order, differ from the 3 expectation(s):\n"+
		"  index 0: want run \"dt-m-3\" (tenant:acme)\n"+
		"    run \"dt-m-1\" (tenant:acme):\n"+
		"      run id: got \"dt-m-1\", want \"dt-m-3\"\n"+
		"  index 2: want run \"dt-m-1\" (tenant:acme)\n"+
		"    run \"dt-m-3\" (tenant:acme):\n"+
		"      run id: got \"dt-m-3\", want \"dt-m-1\"", func(tb dockettest.TB) {
		dockettest.RequireManyInserted(ctx, tb, pool, []dockettest.Expect{
			{Scope: acme, RunID: "dt-m-3"}, {Scope: beta, RunID: "dt-m-2"}, {Scope: acme, RunID: "dt-m-1"}})
	})
	fails(t, "one run more than expected", "dockettest: the 2 run(s) of tenant:acme, in insert order, differ from the 1 expectation(s):\n"+
		"  index 1: run \"dt-m-3\" (tenant:acme, graph \"g1\", status running) is not expected", func(tb dockettest.TB) {
		dockettest.RequireManyInserted(ctx, tb, pool, []dockettest.Expect{{Scope: acme, RunID: "dt-m-1"}})
	})
	fails(t, "one run fewer than expected", "dockettest: the 1 run(s) of tenant:beta, in insert order, differ from the 2 expectation(s):\n"+
		"  index 1: missing, want a run of graph \"g2\" (tenant:beta)", func(tb dockettest.TB) {
		dockettest.RequireManyInserted(ctx, tb, pool, []dockettest.Expect{{Scope: beta, GraphID: "g2"}, {Scope: beta, GraphID: "g2"}})
	})
	fails(t, "no expectations", "dockettest: RequireManyInserted: no expectations; RequireNotInserted asserts an absence", func(tb dockettest.TB) {
		dockettest.RequireManyInserted(ctx, tb, pool, nil)
	})
	fails(t, "two schemas", `dockettest: RequireManyInserted: the expectations name the schemas "" and "docket"; one read covers one schema`, func(tb dockettest.TB) {
		dockettest.RequireManyInserted(ctx, tb, pool, []dockettest.Expect{{Scope: acme, GraphID: "g1"}, {Scope: acme, GraphID: "g1", Schema: "docket"}})
	})
}

// With Docket in a schema of its own, the client's Config.Schema decides,
// and a pool or transaction names it in Expect.Schema.
func TestDockettestRequireInsertedInSchema(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.PoolFor(t, pgtest.NewEmptyDatabase(t))
	if err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "docket"}).Migrate(ctx, docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := testkit.OpenClient(t, pool, docket.Config{Schema: "docket", TenantMode: docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 1}})
	if _, err := client.InsertRun(ctx, run("dt-s-1", "acme", "g", `{}`)); err != nil {
		t.Fatal(err)
	}
	expect := dockettest.Expect{Scope: docket.Tenant("acme"), RunID: "dt-s-1"}
	passes(t, "through the client", func(tb dockettest.TB) { dockettest.RequireInserted(ctx, tb, client, expect) })
	fails(t, "through the pool without the schema", `dockettest: RequireInserted: reading docket_runs: ERROR: relation "docket_runs" does not exist (SQLSTATE 42P01); `+
		`the search_path does not reach Docket's tables: set Expect.Schema to the schema they were migrated into (a client's Config.Schema)`,
		func(tb dockettest.TB) { dockettest.RequireInserted(ctx, tb, pool, expect) })
	fails(t, "through the pool with another schema", `dockettest: RequireManyInserted: reading "nowhere"."docket_runs": ERROR: relation "nowhere.docket_runs" does not exist (SQLSTATE 42P01); `+
		`Expect.Schema "nowhere" holds no Docket tables: set it to the schema they were migrated into (a client's Config.Schema)`,
		func(tb dockettest.TB) {
			dockettest.RequireManyInserted(ctx, tb, pool, []dockettest.Expect{{Scope: docket.Tenant("acme"), RunID: "dt-s-1", Schema: "nowhere"}})
		})
	expect.Schema = "docket"
	passes(t, "through the pool with the schema", func(tb dockettest.TB) { dockettest.RequireInserted(ctx, tb, pool, expect) })
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	passes(t, "through a transaction with the schema", func(tb dockettest.TB) { dockettest.RequireInsertedTx(ctx, tb, tx, expect) })
}
