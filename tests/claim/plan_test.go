package claim

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Plan regression check of the claim engines and of the Worker's verdicts.
// Every SQL statement of docket_tenant_fair_claim, docket_legacy_claim and
// docket_commit_runs is read from its source file, where it sits between a
// "-- statement NAME" and an "-- end statement" line, and EXPLAINed as the
// generic plan the function runs (all three force generic plans) over
// 100,000 runs in 1,000 tenants, on a mixed domain and on a fresh backlog
// (planLoads), with default
// planner settings. The check is about access paths, not timing: no plan may
// scan docket_runs or a per-scope table sequentially, and each statement
// must reach docket_runs through exactly its intended indexes.

// planSource is one engine: its function (whose source file is the one the
// newest migration includes verbatim, see sourceFile), and per marked
// statement every index its plan must use and no other (a relation read
// without an index would show up as a sequential scan). The singleton
// policy row is the one relation that a sequential scan may read: it has one
// row.
type planSource struct {
	function string
	indexes  map[string][]string
}

// planSources are the two engines and the Worker's verdicts.
var planSources = []planSource{
	{"docket_tenant_fair_claim", planTenantFairIndexes},
	{"docket_legacy_claim", planLegacyIndexes},
	{"docket_commit_runs", planCommitIndexes},
}

// source is the engine's current source in db/functions (the version the
// newest migration that includes the function names, spliced from its step
// files when it is split by step) and the include name it goes by.
func (s planSource) source(t *testing.T) (file string, text []byte) {
	t.Helper()
	functions, err := db.InstalledFunctions()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range functions {
		if f.Name == s.function {
			text, err := db.ReadFunctionSource(db.Functions, path.Join(db.FunctionsDir, f.File))
			if err != nil {
				t.Fatal(err)
			}
			return f.File, text
		}
	}
	t.Fatalf("no migration installs %s", s.function)
	return "", nil
}

// planVar is a PL/pgSQL variable of the engine as a statement parameter:
// its SQL type and a representative value.
type planVar struct {
	typ   string
	value func(f *planFixture) any
}

// planFixture holds the representative values drawn from the loaded data.
type planFixture struct {
	now       time.Time
	scope     string
	position  int64
	queuedIDs []int64
}

// planVars are the engine's variables that its statements read. A statement
// that reads any other variable fails the check, so a new one must be given
// a type here.
var planVars = map[string]planVar{
	"p_now":            {"timestamptz", func(f *planFixture) any { return f.now }},
	"p_cutoff":         {"timestamptz", func(f *planFixture) any { return f.now.Add(-time.Hour) }},
	"p_demand":         {"integer", func(*planFixture) any { return 16 }},
	"p_max_attempts":   {"integer", func(*planFixture) any { return 25 }},
	"p_preference":     {"text", func(*planFixture) any { return nil }},
	"c_class_reserve":  {"integer", func(*planFixture) any { return 4 }},
	"c_frozen":         {"integer", func(*planFixture) any { return 16 }},
	"c_grant_outcomes": {"integer", func(*planFixture) any { return 8 }},
	"c_wake_batch":     {"integer", func(*planFixture) any { return 64 }},
	"v_cursor":         {"bigint", func(f *planFixture) any { return f.position - 1 }},
	"v_window":         {"integer", func(*planFixture) any { return 32 }},
	"v_run_scopes":     {"text[]", func(f *planFixture) any { return []string{f.scope} }},
	"v_position":       {"bigint", func(f *planFixture) any { return f.position }},
	"v_scope":          {"text", func(f *planFixture) any { return f.scope }},
	// Null, as in parked mode: the lock statement then probes the pages,
	// so the plan shows the probe's indexes.
	"v_win_index":      {"integer", func(*planFixture) any { return nil }},
	"v_cap":            {"integer", func(*planFixture) any { return 10 }},
	"v_limit":          {"integer", func(*planFixture) any { return 8 }},
	"v_served_ready":   {"boolean", func(*planFixture) any { return false }},
	"v_served_expired": {"boolean", func(*planFixture) any { return false }},
	"v_moved_ids":      {"bigint[]", func(f *planFixture) any { return f.queuedIDs[:1] }},
	"v_promote_ids":    {"bigint[]", func(f *planFixture) any { return f.queuedIDs }},
	"v_pending":        {"docket_claim_pending[]", planPending},
	"v_pending_grants": {"text[]", func(f *planFixture) any { return []string{f.scope} }},
	"v_pending_tats":   {"timestamptz[]", func(f *planFixture) any { return []time.Time{f.now} }},
	"v_token_at":       {"timestamptz", func(f *planFixture) any { return f.now }},
	"v_take_ids":       {"bigint[]", func(f *planFixture) any { return f.queuedIDs }},
	"v_take_kinds":     {"text[]", func(f *planFixture) any { return planRepeat("queued_ready", len(f.queuedIDs)) }},
	"v_take_poison":    {"boolean[]", func(f *planFixture) any { return planRepeat(false, len(f.queuedIDs)) }},
	"v_take_eligible":  {"timestamptz[]", func(f *planFixture) any { return planRepeat(f.now, len(f.queuedIDs)) }},
	"v_written":        {"integer", func(*planFixture) any { return 0 }},
	"v_call_token":     {"uuid", func(*planFixture) any { return "00000000-0000-4000-8000-000000000001" }},
	"v_xid":            {"bigint", func(*planFixture) any { return int64(1) }},
	// One verdict of docket_commit_runs: a claimed run of the fixture's
	// scope finishing.
	"p_scope_keys":       {"text[]", func(f *planFixture) any { return []string{f.scope} }},
	"p_run_ids":          {"text[]", func(*planFixture) any { return []string{"p-42"} }},
	"p_claim_tokens":     {"text[]", func(*planFixture) any { return []string{"00000000-0000-4000-8000-000000000001"} }},
	"p_expected_seqs":    {"bigint[]", func(*planFixture) any { return []int64{0} }},
	"p_steps":            {"integer[]", func(*planFixture) any { return []int32{1} }},
	"p_states":           {"text[]", func(*planFixture) any { return []string{""} }},
	"p_checkpoint_types": {"text[]", func(*planFixture) any { return []string{""} }},
	"p_statuses":         {"text[]", func(*planFixture) any { return []string{"done"} }},
	"p_schedules":        {"text[]", func(*planFixture) any { return []string{"terminal"} }},
	"p_wake_ats":         {"timestamptz[]", func(f *planFixture) any { return []time.Time{f.now} }},
	"p_wake_delays_us":   {"bigint[]", func(*planFixture) any { return []int64{0} }},
	"p_attempt_changes":  {"text[]", func(*planFixture) any { return []string{"reset"} }},
	"p_error_kinds":      {"text[]", func(*planFixture) any { return []string{""} }},
	"p_error_texts":      {"text[]", func(*planFixture) any { return []string{""} }},
}

// planPending is the fixture's queued rows as one visit's pending outcomes,
// in the text form of docket_claim_pending[].
func planPending(f *planFixture) any {
	items := make([]string, len(f.queuedIDs))
	for i, id := range f.queuedIDs {
		items[i] = fmt.Sprintf(`"(%d,queued_ready,f,\"%s\",1,%d,%d,%s)"`,
			id, f.now.Format(time.RFC3339Nano), f.position-1, f.position, f.scope)
	}
	return "{" + strings.Join(items, ",") + "}"
}

// planTenantFairIndexes are the index sets of the TenantFair statements.
var planTenantFairIndexes = map[string][]string{
	"policy_lock": {},
	"policy_wait": {},
	// The domain-wide class probes read the oldest due entry, stepping
	// over the paused partitions' entries, and the oldest claim; when that
	// claim has expired, the expired probe reads the oldest claims for an
	// admitted one outside the paused partitions.
	"class_probes":  {"docket_runs_ready_idx", "docket_runs_expired_idx", "docket_claim_partitions_paused_idx"},
	"expired_probe": {"docket_runs_expired_idx", "docket_claim_partitions_paused_idx"},
	// The full-ring walk's steps through the whole ring, while its visits
	// grant; then its window: the next ring positions after the cursor
	// and from the smallest, each with a probe of its three pages; the
	// partition locks of a run of empty positions by key; and the partition
	// authority of a position with a page, with the same three probes.
	"ring_step": {"docket_claim_schedule_ring_idx"},
	"ring_wrap": {"docket_claim_schedule_ring_idx"},
	"ring_window": {"docket_claim_schedule_ring_idx", "docket_runs_admitted_ready_idx",
		"docket_runs_queued_ready_idx", "docket_runs_admitted_claimed_idx"},
	"empty_run_lock": {"docket_claim_partitions_pkey"},
	// Parked mode: the wake sweep reads the wake index and unparks by key,
	// the walk steps through the awake ring, and a park locks its schedule
	// row by key, then re-checks dormancy with a probe of each page and of
	// both claimed indexes.
	"wake_sweep":      {"docket_claim_schedule_wake_idx", "docket_claim_schedule_pkey"},
	"ring_step_awake": {"docket_claim_schedule_awake_idx"},
	"ring_wrap_awake": {"docket_claim_schedule_awake_idx"},
	"park_lock":       {"docket_claim_schedule_pkey"},
	"park": {"docket_claim_schedule_pkey", "docket_runs_admitted_ready_idx", "docket_runs_queued_ready_idx",
		"docket_runs_admitted_claimed_idx", "docket_runs_unadmitted_claimed_idx"},
	// A rate_limited visit's park in parked mode: the same lock, then
	// the dormancy re-check without the queued page, which waits for its
	// token, and the earliest admitted-ready wake.
	"rate_park_lock": {"docket_claim_schedule_pkey"},
	"rate_park": {"docket_claim_schedule_pkey", "docket_runs_admitted_ready_idx",
		"docket_runs_admitted_claimed_idx", "docket_runs_unadmitted_claimed_idx"},
	"partition_lock": {"docket_claim_partitions_pkey", "docket_runs_admitted_ready_idx",
		"docket_runs_queued_ready_idx", "docket_runs_admitted_claimed_idx"},
	// The scope's unfinished count, its bounded admitted count, the three
	// pages and the exact-key lock of each frozen id.
	"candidates": {"docket_claim_schedule_pkey", "docket_runs_admitted_ready_idx",
		"docket_runs_queued_ready_idx", "docket_runs_admitted_claimed_idx", "docket_runs_pkey"},
	// The moved rows by id, then older queued rows of the scope.
	"fifo_recheck": {"docket_runs_pkey", "docket_runs_queued_ready_idx"},
	// The chosen rows by id, the granted partitions and the cursor; a call
	// without outcomes only moves the cursor.
	"write":       {"docket_runs_pkey", "docket_claim_partitions_pkey"},
	"cursor_move": {},
}

// planLegacyIndexes are the index sets of the Legacy statements.
var planLegacyIndexes = map[string][]string{
	"policy_share": {},
	// The oldest due and the oldest claimed entry of the domain.
	"class_probes": {"docket_runs_ready_idx", "docket_runs_expired_idx"},
	// The two cursors, oldest first, and the chosen rows by id.
	"ready_rows":   {"docket_runs_ready_idx"},
	"expired_rows": {"docket_runs_expired_idx"},
	"write":        {"docket_runs_pkey"},
}

// planCommitIndexes is the index set of the verdict statement: each
// commit's run by its run id, then the fenced rows' update by id.
var planCommitIndexes = map[string][]string{
	"commit": {"docket_runs_run_id_key", "docket_runs_pkey"},
}

// planStatement is one marked statement of the engine's source.
type planStatement struct {
	name string
	sql  string
}

var (
	planMarked   = regexp.MustCompile(`(?ms)^[ \t]*-- statement (\w+)\n(.*?)^[ \t]*-- end statement\n`)
	planInto     = regexp.MustCompile(`\binto\s+v_\w+(?:\s*,\s*v_\w+)*`)
	planVariable = regexp.MustCompile(`\b[pvc]_[a-z_]+\b`)
	planTable    = regexp.MustCompile(`(?i)\b(?:from|join|update)\s+docket_\w+`)
	planComment  = regexp.MustCompile(`--[^\n]*`)
)

// planStatements reads the marked statements of an engine's source and
// checks that no statement reads a table outside the markers.
func planStatements(t *testing.T, source planSource) []planStatement {
	t.Helper()
	file, src := source.source(t)
	text := string(src)
	var out []planStatement
	for _, m := range planMarked.FindAllStringSubmatch(text, -1) {
		out = append(out, planStatement{name: m[1], sql: m[2]})
	}
	outside := planComment.ReplaceAllString(planMarked.ReplaceAllString(text, ""), "")
	if unmarked := planTable.FindAllString(outside, -1); len(unmarked) > 0 {
		t.Fatalf("%s has statements outside the plan markers: %q", file, unmarked)
	}
	names := make([]string, len(out))
	for i, s := range out {
		names[i] = s.name
	}
	if want := slices.Sorted(maps.Keys(source.indexes)); !slices.Equal(slices.Sorted(slices.Values(names)), want) {
		t.Fatalf("marked statements %v, want exactly %v", names, want)
	}
	return out
}

// TestClaimPlanSourceIsInstalled: the statements checked below are those of
// the installed functions, whose bodies are the source files', and each
// function forces the generic plans the check explains (without it,
// PostgreSQL may plan a statement afresh on every call).
func TestClaimPlanSourceIsInstalled(t *testing.T) {
	pool := testkit.NewPool(t)
	for _, source := range planSources {
		file, src := source.source(t)
		text := string(src)
		start, end := strings.Index(text, "as $$\n"), strings.LastIndex(text, "$$;")
		if start < 0 || end < start {
			t.Fatalf("%s: no function body", file)
		}
		var installed string
		var config []string
		if err := pool.QueryRow(testkit.Context(t), `select prosrc, coalesce(proconfig, '{}') from pg_proc
			 where proname = $1 and pronamespace = current_schema()::regnamespace`, source.function).
			Scan(&installed, &config); err != nil {
			t.Fatal(err)
		}
		if installed != text[start+len("as $$"):end] {
			t.Fatalf("the installed %s differs from %s", source.function, file)
		}
		if !slices.Contains(config, "plan_cache_mode=force_generic_plan") {
			t.Fatalf("%s does not force generic plans: its settings are %v", source.function, config)
		}
	}
}

// TestClaimPlans checks the generic plan of every marked statement on each
// data state of planLoads, 100,000 runs in 1,000 tenants each.
func TestClaimPlans(t *testing.T) {
	for _, load := range planLoads {
		t.Run(load.name, func(t *testing.T) {
			pool := testkit.NewPool(t)
			checkPlans(t, pool, planLoad(t, pool, load))
		})
	}
}

// checkPlans checks every marked statement's generic plan on the data f was
// drawn from.
func checkPlans(t *testing.T, pool *pgxpool.Pool, f *planFixture) {
	t.Helper()
	ctx := testkit.Context(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// The function plans its statements generically.
	if _, err := conn.Exec(ctx, `set plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	for _, source := range planSources {
		for i, s := range planStatements(t, source) {
			t.Run(source.function+"/"+s.name, func(t *testing.T) {
				sql, types, args := planParameters(t, s, f)
				name := fmt.Sprintf("%s_plan_%d", source.function, i)
				signature, values := "", ""
				if len(types) > 0 {
					// EXPLAIN EXECUTE takes no bind parameters: the values go in
					// as literals, quoted by the server.
					literals := make([]string, len(args))
					for j, arg := range args {
						if err := conn.QueryRow(ctx, fmt.Sprintf("select format('%%L', $1::%s)", types[j]), arg).
							Scan(&literals[j]); err != nil {
							t.Fatalf("literal of %v: %v", arg, err)
						}
						literals[j] += "::" + types[j]
					}
					signature = "(" + strings.Join(types, ", ") + ")"
					values = "(" + strings.Join(literals, ", ") + ")"
				}
				if _, err := conn.Exec(ctx, fmt.Sprintf("prepare %s %s as %s", name, signature, sql)); err != nil {
					t.Fatalf("prepare: %v\n%s", err, sql)
				}
				var raw []byte
				if err := conn.QueryRow(ctx, fmt.Sprintf("explain (format json) execute %s%s", name, values)).Scan(&raw); err != nil {
					t.Fatalf("explain: %v", err)
				}
				planCheck(t, s.name, raw, source.indexes[s.name])
			})
		}
	}
}

// planParameters turns a marked statement into the text PostgreSQL plans:
// no INTO clause, no terminator, and each variable a typed parameter
// numbered in order of appearance.
func planParameters(t *testing.T, s planStatement, f *planFixture) (sql string, types []string, args []any) {
	t.Helper()
	sql = planComment.ReplaceAllString(s.sql, "")
	sql = strings.TrimSuffix(strings.TrimSpace(planInto.ReplaceAllString(sql, "")), ";")
	numbers := map[string]int{}
	var unknown []string
	sql = planVariable.ReplaceAllStringFunc(sql, func(name string) string {
		v, ok := planVars[name]
		if !ok {
			unknown = append(unknown, name)
			return name
		}
		if _, seen := numbers[name]; !seen {
			numbers[name] = len(types) + 1
			types = append(types, v.typ)
			args = append(args, v.value(f))
		}
		return fmt.Sprintf("$%d", numbers[name])
	})
	if len(unknown) > 0 {
		t.Fatalf("statement %s reads variables without a plan type: %v", s.name, unknown)
	}
	return sql, types, args
}

// planNode is the part of an EXPLAIN (FORMAT JSON) node the check reads.
type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
}

// planCheck asserts the access paths of one statement's plan: no sequential
// scan and exactly the indexes wantIndexes.
func planCheck(t *testing.T, name string, raw []byte, wantIndexes []string) {
	t.Helper()
	var plans []struct {
		Plan planNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("plan of %s: %v\n%s", name, err, raw)
	}
	indexes := map[string]bool{}
	var seq []string
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.Index != "" {
			indexes[n.Index] = true
		}
		if n.NodeType == "Seq Scan" && n.Relation != "docket_claim_policy" {
			seq = append(seq, n.Relation)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plans[0].Plan)
	got := slices.Sorted(maps.Keys(indexes))
	want := slices.Sorted(slices.Values(wantIndexes))
	if len(seq) > 0 || !slices.Equal(got, want) {
		t.Fatalf("%s: sequential scans of %v, indexes %v; want no sequential scan and indexes %v\n%s",
			name, seq, got, want, raw)
	}
}

// planDataLoad is one state of a domain's data that the plans are checked
// on: the insert that makes it, whose only parameter is the fixture's now.
type planDataLoad struct {
	name   string
	insert string
}

// planLoads are the states the plans are checked on. A session plans each
// statement once, on the data of its first call, and keeps that plan for
// every later call, so a plan must not depend on the state it was made in.
//   - mixed: every kind of row at once. Each tenant holds 65% queued and
//     due, 5% admitted and due, 10% live admitted claims, 5% expired
//     admitted claims, 7% due in the future, 3% waiting and 5% done.
//   - fresh: a backlog before its first claim, every run queued and due.
//     The admitted indexes are empty, so an index over all admitted rows
//     costs the planner as little as one over a page of them, and only the
//     statement's form may decide between them.
var planLoads = []planDataLoad{
	{"mixed", `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at,
			claim_token, claimed_at, claim_attempts, tenant_admitted_at, finished_at)
		select format('p-%s', g), format('t%s', lpad((g % 1000)::text, 4, '0')), 'g', 'h1',
		       case when k < 5 then 'done' when k < 8 then 'waiting' else 'running' end, '{}',
		       case when k between 8 and 14 then $1::timestamptz + make_interval(mins => k)
		            when k >= 30 then $1::timestamptz - make_interval(secs => 100000 - g) end,
		       case when k between 15 and 29 then gen_random_uuid() end,
		       case when k between 15 and 19 then $1::timestamptz - interval '2 hours' - make_interval(secs => g)
		            when k between 20 and 29 then $1::timestamptz - make_interval(secs => g % 600) end,
		       case when k between 15 and 29 then 1 else 0 end,
		       case when k between 15 and 19 then $1::timestamptz - interval '2 hours' - make_interval(secs => g)
		            when k between 20 and 29 then $1::timestamptz - make_interval(secs => g % 600)
		            when k between 30 and 34 then $1::timestamptz - make_interval(secs => 100000 - g) end,
		       case when k < 5 then $1::timestamptz end
		  from generate_series(0, 99999) as g, lateral (select g / 1000 as k) as m`},
	{"fresh", `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('p-%s', g), format('t%s', lpad((g % 1000)::text, 4, '0')), 'g', 'h1', 'running', '{}',
		       $1::timestamptz - make_interval(secs => 100000 - g)
		  from generate_series(0, 99999) as g`},
}

// planLoad inserts load's 100,000 runs in 1,000 tenants through
// docket_runs, so the triggers keep partitions and ring exact, analyzes the
// database and draws the fixture from it.
func planLoad(t *testing.T, pool *pgxpool.Pool, load planDataLoad) *planFixture {
	t.Helper()
	f := &planFixture{now: testkit.ClaimBase}
	testkit.ExecSQL(t, pool, load.insert, f.now)
	testkit.ExecSQL(t, pool, `analyze`)
	f.scope = "t0042"
	ctx := testkit.Context(t)
	if err := pool.QueryRow(ctx, `select ring_position from docket_claim_schedule where scope_key = $1`, f.scope).
		Scan(&f.position); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `select id from docket_runs
		 where scope_key = $1 and status = 'running' and claim_token is null and tenant_admitted_at is null
		   and wake_at <= $2
		 order by wake_at, id limit 8`, f.scope, f.now)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		f.queuedIDs = append(f.queuedIDs, id)
	}
	if err := rows.Err(); err != nil || len(f.queuedIDs) != 8 {
		t.Fatalf("queued runs of %s: %v, %d found", f.scope, err, len(f.queuedIDs))
	}
	return f
}

// planRepeat is n copies of v.
func planRepeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
