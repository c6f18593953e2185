package migration

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// stateFunction is one derived run state as pg_proc records it.
type stateFunction struct {
	Name      string
	Volatile  string
	Parallel  string
	Strict    bool
	Definer   bool
	Config    []string
	Arguments string
	Returns   string
	Source    string
}

// relationFree matches a body that is one SELECT of an expression, with no
// FROM: it names no relation, so it resolves nothing through search_path.
var relationFree = regexp.MustCompile(`(?is)^\s*select\s+[^;]*$`)

// unionArms matches a body that is the union of two states of the row.
var unionArms = regexp.MustCompile(`(?is)^\s*select\s+(docket_run_\w+)\(r\)\s+or\s+(docket_run_\w+)\(r\)\s*$`)

// conjuncts normalizes a predicate as EXPLAIN or pg_get_expr prints it (an
// AND of column tests) into its sorted conjuncts, without the alias.
func conjuncts(predicate string) []string {
	flat := strings.NewReplacer("(", "", ")", "", "r.", "").Replace(predicate)
	parts := strings.Split(flat, " AND ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	slices.Sort(parts)
	return parts
}

// The derived run states (the language sql functions docket_run_* of a
// Docket schema; docket_rate_step is arithmetic on a rate, no state)
// are what makes naming them safe and free: each is an immutable predicate
// of one docket_runs row with no SET clause and no relation in its body, so
// PostgreSQL inlines it; the planner indeed replaces a call by column tests
// (not a function call); and each state is exactly the predicate of one
// partial index of docket_runs, the base that every other state builds on,
// or the union of two states that are index predicates. The plan test
// (tests/claim) then proves each engine statement that names a state still
// reaches its index, and tests/admin the same of the queries that count a
// union.
func TestDerivedRunStatesAreInlinedPredicates(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	rows, err := pool.Query(ctx, `select p.proname::text, p.provolatile::text, p.proparallel::text, p.proisstrict, p.prosecdef,
       coalesce(p.proconfig, '{}'), pg_get_function_arguments(p.oid), p.prorettype::regtype::text, p.prosrc
  from pg_proc p join pg_language l on l.oid = p.prolang
 where p.pronamespace = 'public'::regnamespace and l.lanname = 'sql' and p.proname like 'docket\_run\_%'
 order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	states, err := pgx.CollectRows(rows, pgx.RowToStructByPos[stateFunction])
	if err != nil {
		t.Fatal(err)
	}
	if len(states) == 0 {
		t.Fatal("the schema holds no derived run state")
	}

	rows, err = pool.Query(ctx, `select c.relname::text, pg_get_expr(i.indpred, i.indrelid)
  from pg_index i join pg_class c on c.oid = i.indexrelid
 where i.indrelid = 'docket_runs'::regclass and i.indpred is not null`)
	if err != nil {
		t.Fatal(err)
	}
	indexes := map[string][]string{}
	for rows.Next() {
		var name, predicate string
		if err := rows.Scan(&name, &predicate); err != nil {
			t.Fatal(err)
		}
		indexes[name] = conjuncts(predicate)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}

	// The predicate the planner filters a sequential scan with, after
	// inlining.
	inlined := map[string][]string{}
	conn, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Rollback(ctx) }()
	for _, setting := range []string{"enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan"} {
		if _, err := conn.Exec(ctx, "select set_config($1, 'off', true)", setting); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range states {
		switch {
		case s.Volatile != "i" || s.Parallel != "s" || s.Strict || s.Definer || len(s.Config) > 0:
			t.Errorf("%s: volatility %s, parallel %s, strict %v, definer %v, settings %q; want immutable, parallel safe, "+
				"not strict, invoker, no setting (a SET clause stops inlining)", s.Name, s.Volatile, s.Parallel, s.Strict, s.Definer, s.Config)
		case s.Arguments != "r docket_runs" || s.Returns != "boolean":
			t.Errorf("%s(%s) returns %s; want a boolean of one docket_runs row r", s.Name, s.Arguments, s.Returns)
		case !relationFree.MatchString(s.Source) || regexp.MustCompile(`(?i)\bfrom\b`).MatchString(s.Source):
			t.Errorf("%s: body %q is not one SELECT of an expression without FROM", s.Name, s.Source)
		}
		var plan []string
		planRows, err := conn.Query(ctx, `explain (verbose, costs off) select from docket_runs r where `+s.Name+`(r)`)
		if err != nil {
			t.Fatal(err)
		}
		plan, err = pgx.CollectRows(planRows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range plan {
			if filter, ok := strings.CutPrefix(strings.TrimSpace(line), "Filter: "); ok {
				if strings.Contains(filter, "docket_run_") {
					t.Errorf("%s is not inlined: the plan filters with %q", s.Name, filter)
				}
				inlined[s.Name] = conjuncts(filter)
			}
		}
		if inlined[s.Name] == nil {
			t.Fatalf("%s: no filter in the plan %q", s.Name, plan)
		}
	}

	indexOf := func(name string) string {
		for index, predicate := range indexes {
			if slices.Equal(predicate, inlined[name]) {
				return index
			}
		}
		return ""
	}
	for _, s := range states {
		if index := indexOf(s.Name); index != "" {
			t.Logf("%s is the predicate of %s: %q", s.Name, index, inlined[s.Name])
			continue
		}
		if arms := unionArms.FindStringSubmatch(s.Source); arms != nil {
			// A union of two states, each an index's predicate: the planner
			// reads it as a BitmapOr of the two indexes.
			for _, arm := range arms[1:] {
				if _, known := inlined[arm]; !known || indexOf(arm) == "" {
					t.Errorf("%s is a union with %s, which is no state that is the predicate of a partial index", s.Name, arm)
				}
			}
			t.Logf("%s is the union of %s and %s", s.Name, arms[1], arms[2])
			continue
		}
		for _, other := range states {
			for _, c := range inlined[s.Name] {
				if !slices.Contains(inlined[other.Name], c) {
					t.Errorf("%s (%q) is the predicate of no partial index of docket_runs, nor the base of %s (%q)",
						s.Name, inlined[s.Name], other.Name, inlined[other.Name])
				}
			}
		}
	}
}
