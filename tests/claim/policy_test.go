package claim

import (
	"errors"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The Legacy engine, the request validation both engines share, the claim
// functions' argument errors and their installed shape.

func TestLegacyClaimOldestFirstTenantBlind(t *testing.T) {
	e := testkit.NewClaimLegacy(t)
	e.Due("a", "a-1", testkit.ClaimBase.Add(-10*time.Second))
	e.Due("b", "b-1", testkit.ClaimBase.Add(-50*time.Second))
	e.Due("", "n-1", testkit.ClaimBase.Add(-30*time.Second))
	e.Due("a", "a-2", testkit.ClaimBase.Add(-40*time.Second))
	e.Due("c", "c-later", testkit.ClaimBase.Add(time.Hour))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 3, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "oldest first", testkit.ClaimOutcomeIDs(tr), []string{"b-1", "a-2", "n-1"})
	if len(tr.Inspections) != 0 {
		t.Fatalf("Legacy produced %d inspections", len(tr.Inspections))
	}
	for i, o := range tr.Outcomes {
		if o.Visit != 0 || o.Ordinal != i+1 || o.Class != docket.ClassQueuedReady || o.Disposition != "" || o.Poisoned {
			t.Fatalf("outcome %d = %+v", i, o)
		}
	}
	if l := tr.Result.Leases[2]; l.Scope != docket.Tenantless || l.Attempt != 1 || !l.ClaimedAt.Equal(testkit.ClaimBase) ||
		!l.EligibleAt.Equal(testkit.ClaimBase.Add(-30*time.Second)) || l.GraphID != "g" || l.GraphHash != "h1" {
		t.Fatalf("tenantless lease = %+v", l)
	}
	if got := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where tenant_admitted_at is not null`); got != 0 {
		t.Fatalf("Legacy wrote %d admission markers", got)
	}
	if e.Cursor() != 0 || e.Epochs()["a"]+e.Epochs()["b"]+e.Epochs()[""] != 0 {
		t.Fatalf("Legacy moved the cursor (%d) or an epoch (%v)", e.Cursor(), e.Epochs())
	}
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 10, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "the rest that is due", testkit.ClaimOutcomeIDs(tr), []string{"a-1"})
}

func TestLegacyClaimClasses(t *testing.T) {
	setup := func(t *testing.T, readyAge time.Duration) *testkit.ClaimEnv {
		e := testkit.NewClaimLegacy(t)
		e.Due("t", "r-1", testkit.ClaimBase.Add(-readyAge))
		e.Due("t", "r-2", testkit.ClaimBase.Add(-readyAge+time.Minute))
		e.Claimed("t", "x-1", testkit.ClaimBase.Add(-2*time.Hour), false)
		return e
	}
	cases := []struct {
		name     string
		readyAge time.Duration
		limit    int
		pref     docket.Preference
		want     []string
	}{
		{"demand one prefers ready", time.Hour, 1, docket.PreferReady, []string{"r-1"}},
		{"demand one prefers expired", time.Hour, 1, docket.PreferExpired, []string{"x-1"}},
		{"demand one by age", time.Hour, 1, docket.PreferNone, []string{"x-1"}},
		{"demand two reserves both classes", 3 * time.Hour, 2, docket.PreferNone, []string{"r-1", "x-1"}},
		{"demand two ignores the preference", 3 * time.Hour, 2, docket.PreferReady, []string{"r-1", "x-1"}},
		{"demand three fills by age", time.Hour, 3, docket.PreferNone, []string{"x-1", "r-1", "r-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t, tc.readyAge)
			tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, tc.limit, tc.pref))
			testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), tc.want)
		})
	}
	t.Run("fallback to the other class", func(t *testing.T) {
		e := setup(t, time.Hour)
		e.Finish("x-1")
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferExpired))
		testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"r-1"})
	})
	t.Run("last slot kept for an unserved class", func(t *testing.T) {
		e := setup(t, time.Hour)
		e.HoldRun("x-1")
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
		testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"r-1"})
	})
}

func TestLegacyClaimMarkersStealAndPoison(t *testing.T) {
	e := testkit.NewClaimLegacy(t)
	e.Due("t", "marked", testkit.ClaimBase.Add(-3*time.Hour))
	e.MarkAdmitted("marked")
	e.Claimed("t", "stale-claim", testkit.ClaimBase.Add(-2*time.Hour), false)
	e.Due("t", "worn", testkit.ClaimBase.Add(-time.Hour))
	e.MarkAdmitted("worn")
	e.SetAttempts("worn", 5)
	e.Due("t", "plain", testkit.ClaimBase.Add(-30*time.Minute))

	req := testkit.ClaimReq(testkit.ClaimBase, 4, docket.PreferNone)
	req.MaxClaimAttempts = 5
	tr := e.Trace(req)
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{"marked", "stale-claim", "worn", "plain"})
	wantClasses := []docket.WorkClass{docket.ClassAdmittedReady, docket.ClassExpired, docket.ClassAdmittedReady, docket.ClassQueuedReady}
	if got := classes(tr); !slices.Equal(got, wantClasses) {
		t.Fatalf("classes = %v", got)
	}
	if tr.Outcomes[1].Disposition != string(policy.OutcomeExpiredRecovery) || !tr.Outcomes[2].Poisoned {
		t.Fatalf("outcomes = %+v", tr.Outcomes)
	}
	wantStates := map[string]testkit.ClaimRunState{
		"marked":      {Claimed: true, Marked: true, Attempts: 1},
		"stale-claim": {Claimed: true, Attempts: 2},
		"worn":        {Poisoned: true, Attempts: 5},
		"plain":       {Claimed: true, Attempts: 1},
	}
	for id, want := range wantStates {
		if got := e.State(id); got != want {
			t.Fatalf("%s = %+v, want %+v", id, got, want)
		}
	}
	if p := tr.Result.Poisoned; len(p) != 1 || p[0].RunID != "worn" || p[0].Attempts != 5 {
		t.Fatalf("poisoned = %+v", p)
	}
}

func TestLegacyClaimSubstitutesLockedRows(t *testing.T) {
	e := testkit.NewClaimLegacy(t)
	ids := e.DueMany("t", "t", 3, testkit.ClaimBase.Add(-time.Hour))
	e.HoldRun(ids[0])
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), ids[1:2])
}

// TestClaimCallCeilings: one call commits at most 256 outcomes with either
// engine; TenantFair reaches it as 32 grants of 8.
func TestClaimCallCeilings(t *testing.T) {
	seed := func(e *testkit.ClaimEnv, tenants int) {
		testkit.ExecSQL(t, e.Pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
			select format('c-%s', g), format('t%s', lpad((g % $1::integer)::text, 3, '0')), 'g', 'h1', 'running',
			       '{}', $2::timestamptz - make_interval(secs => 1000 - g)
			  from generate_series(1, 320) g`, tenants, testkit.ClaimBase)
	}
	t.Run("legacy", func(t *testing.T) {
		e := testkit.NewClaimLegacy(t)
		seed(e, 1)
		res, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1000, docket.PreferNone))
		if err != nil || len(res.Leases) != policy.OutcomesPerCall {
			t.Fatalf("%d leases, %v; want %d", len(res.Leases), err, policy.OutcomesPerCall)
		}
	})
	t.Run("tenant_fair", func(t *testing.T) {
		e := testkit.NewClaimTenantFair(t, 100)
		seed(e, 40)
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1000, docket.PreferNone))
		if len(tr.Outcomes) != policy.OutcomesPerCall || len(tr.Inspections) != policy.GrantsPerCall {
			t.Fatalf("%d outcomes in %d inspections; want %d in %d", len(tr.Outcomes), len(tr.Inspections),
				policy.OutcomesPerCall, policy.GrantsPerCall)
		}
		for _, in := range tr.Inspections {
			if in.Disposition != policy.DispositionGrant || in.Outcomes != policy.OutcomesPerGrant {
				t.Fatalf("inspection %+v, want a full grant", in)
			}
		}
	})
}

func TestLegacyFailsClosed(t *testing.T) {
	e := testkit.NewClaimLegacy(t)
	e.DueMany("t", "t", 3, testkit.ClaimBase.Add(-time.Hour))
	for _, m := range txModes {
		t.Run(m.name, func(t *testing.T) {
			e.T = t
			e.ExpectRefusedInTx(m.opts, m.reason)
		})
	}
	t.Run("policy row held for update", func(t *testing.T) {
		e.T = t
		release := e.HoldLock(`select 1 from docket_claim_policy where id = 1 for update`)
		before := e.Snapshot()
		_, err := e.Client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		testkit.ClaimExpectUnavailable(t, err, "lock_contention")
		if e.Snapshot() != before {
			t.Fatal("a contended Legacy claim changed state")
		}
		release()
	})
	t.Run("rollback", func(t *testing.T) {
		e.T = t
		before := e.Snapshot()
		ctx := testkit.Context(t)
		tx, err := e.Pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := e.Client.ClaimDueTx(ctx, tx, testkit.ClaimReq(testkit.ClaimBase, 3, docket.PreferNone)); err != nil || res.Outcomes() != 3 {
			t.Fatalf("claim in transaction: %+v, %v", res, err)
		}
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if e.Snapshot() != before {
			t.Fatal("a rolled-back Legacy claim left changes")
		}
	})
}

func TestClaimRequestValidation(t *testing.T) {
	valid := testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)
	// One past the int32 range; a variable, so 32-bit builds still compile
	// (there it wraps to a negative value, which is just as invalid).
	aboveInt32 := math.MaxInt32
	aboveInt32++
	cases := []struct {
		name   string
		mutate func(*docket.ClaimRequest)
	}{
		{"zero now", func(r *docket.ClaimRequest) { r.Now = time.Time{} }},
		{"zero limit", func(r *docket.ClaimRequest) { r.Limit = 0 }},
		{"negative limit", func(r *docket.ClaimRequest) { r.Limit = -1 }},
		{"limit above int32", func(r *docket.ClaimRequest) { r.Limit = aboveInt32 }},
		{"negative orphan TTL", func(r *docket.ClaimRequest) { r.ClaimTTL = -time.Second }},
		{"zero max attempts", func(r *docket.ClaimRequest) { r.MaxClaimAttempts = 0 }},
		{"max attempts above int32", func(r *docket.ClaimRequest) { r.MaxClaimAttempts = aboveInt32 }},
		{"unknown preference", func(r *docket.ClaimRequest) { r.Preference = "oldest" }},
	}
	for _, engine := range []struct {
		name string
		env  func(testing.TB) *testkit.ClaimEnv
	}{
		{"tenant_fair", func(t testing.TB) *testkit.ClaimEnv { return testkit.NewClaimTenantFair(t, 2) }},
		{"legacy", testkit.NewClaimLegacy},
	} {
		t.Run(engine.name, func(t *testing.T) {
			e := engine.env(t)
			e.DueMany("t", "t", 2, testkit.ClaimBase.Add(-time.Hour))
			before := e.Snapshot()
			for _, tc := range cases {
				req := valid
				tc.mutate(&req)
				if _, err := e.Client.ClaimDue(testkit.Context(t), req); !errors.Is(err, docket.ErrInvalidArgument) {
					t.Fatalf("%s: err = %v, want ErrInvalidArgument", tc.name, err)
				}
				if _, err := e.Client.TraceClaimDue(testkit.Context(t), req); !errors.Is(err, docket.ErrInvalidArgument) {
					t.Fatalf("%s (trace): err = %v, want ErrInvalidArgument", tc.name, err)
				}
			}
			if e.Snapshot() != before {
				t.Fatal("an invalid request changed state")
			}
			if res, err := e.Client.ClaimDue(testkit.Context(t), valid); err != nil || res.Outcomes() != 1 {
				t.Fatalf("valid request: %+v, %v", res, err)
			}
		})
	}
}

// TestClaimFunctionsRejectInvalidArguments: both SQL functions raise SQLSTATE
// 22023 for invalid arguments, whatever the engine mode.
func TestClaimFunctionsRejectInvalidArguments(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	cases := []struct {
		name string
		args []any
	}{
		{"null now", []any{nil, testkit.ClaimBase, 1, 1, nil, false}},
		{"null cutoff", []any{testkit.ClaimBase, nil, 1, 1, nil, false}},
		{"null demand", []any{testkit.ClaimBase, testkit.ClaimBase, nil, 1, nil, false}},
		{"null max attempts", []any{testkit.ClaimBase, testkit.ClaimBase, 1, nil, nil, false}},
		{"null trace", []any{testkit.ClaimBase, testkit.ClaimBase, 1, 1, nil, nil}},
		{"zero demand", []any{testkit.ClaimBase, testkit.ClaimBase, 0, 1, nil, false}},
		{"zero max attempts", []any{testkit.ClaimBase, testkit.ClaimBase, 1, 0, nil, false}},
		{"cutoff after now", []any{testkit.ClaimBase, testkit.ClaimBase.Add(time.Second), 1, 1, nil, false}},
		{"unknown preference", []any{testkit.ClaimBase, testkit.ClaimBase, 1, 1, "oldest", false}},
	}
	for _, fn := range []string{"docket_tenant_fair_claim", "docket_legacy_claim"} {
		for _, tc := range cases {
			_, err := e.Pool.Exec(testkit.Context(t), `select * from `+fn+`($1::timestamptz, $2::timestamptz,
				$3::integer, $4::integer, $5::text, $6::boolean)`, tc.args...)
			pgErr, ok := errors.AsType[*pgconn.PgError](err)
			if !ok || pgErr.Code != "22023" {
				t.Fatalf("%s %s: err = %v, want SQLSTATE 22023", fn, tc.name, err)
			}
		}
	}
}

// TestClaimFunctionShape checks the installed claim functions against the
// SQL contract and against the result shape declared to sqlc.
func TestClaimFunctionShape(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 2)
	declared, err := os.ReadFile("../../db/sqlc/claim_result_shape.sql")
	if err != nil {
		t.Fatal(err)
	}
	engineIns := []string{"p_now timestamp with time zone", "p_cutoff timestamp with time zone",
		"p_demand integer", "p_max_attempts integer", "p_preference text", "p_trace boolean"}
	combinedIns := engineIns[:5]
	for fn, wantIns := range map[string][]string{"docket_tenant_fair_claim": engineIns, "docket_legacy_claim": engineIns,
		"docket_tenant_fair_claim_combined": combinedIns} {
		var ins, outs []string
		var language, volatility string
		var definer bool
		var config []string
		err := e.Pool.QueryRow(testkit.Context(t), `
			select array_agg(format('%s %s', a.name, format_type(a.type, null)) order by a.ord)
			           filter (where a.mode = 'i'),
			       array_agg(format('%s %s', a.name, format_type(a.type, null)) order by a.ord)
			           filter (where a.mode = 't'),
			       l.lanname, p.provolatile::text, p.prosecdef, coalesce(p.proconfig, '{}')
			  from pg_proc p
			  join pg_language l on l.oid = p.prolang
			 cross join lateral unnest(p.proallargtypes, p.proargmodes::text[], p.proargnames)
			           with ordinality as a(type, mode, name, ord)
			 where p.proname = $1 and p.pronamespace = current_schema()::regnamespace
			 group by l.lanname, p.provolatile, p.prosecdef, p.proconfig`, fn).
			Scan(&ins, &outs, &language, &volatility, &definer, &config)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if !slices.Equal(ins, wantIns) {
			t.Fatalf("%s arguments = %v", fn, ins)
		}
		if want := declaredShape(t, string(declared), fn); !slices.Equal(outs, want) {
			t.Fatalf("%s result columns = %v\nsqlc declaration = %v", fn, outs, want)
		}
		if language != "plpgsql" || volatility != "v" || definer ||
			!slices.ContainsFunc(config, func(c string) bool { return strings.HasPrefix(c, "search_path=") }) {
			t.Fatalf("%s: language %s, volatility %s, security definer %v, config %v", fn, language, volatility, definer, config)
		}
	}
}

// declaredShape extracts the OUT columns of fn from the sqlc declaration,
// spelled as format_type spells them.
func declaredShape(t *testing.T, declared, fn string) []string {
	t.Helper()
	start := strings.Index(declared, "create function "+fn+"(")
	if start < 0 {
		t.Fatalf("no sqlc declaration of %s", fn)
	}
	body := declared[start:]
	body = body[:strings.Index(body, ") language")]
	spell := strings.NewReplacer("timestamptz", "timestamp with time zone")
	var out []string
	for _, m := range regexp.MustCompile(`out (\w+) (\w+)`).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1]+" "+spell.Replace(m[2]))
	}
	return out
}
