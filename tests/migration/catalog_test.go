package migration

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// docketFunctions are the functions a migrated Docket schema holds: those
// the newest migration installs, sorted by name.
func docketFunctions(t testing.TB) []string {
	t.Helper()
	functions, err := db.InstalledFunctions()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(functions))
	for i, f := range functions {
		names[i] = f.Name
	}
	return names
}

// dynamicSQL matches what building SQL text at run time needs in
// PL/pgSQL: EXECUTE, or format() and quote_ident() to splice identifiers.
// (quote_literal in an error message builds no SQL.)
var dynamicSQL = regexp.MustCompile(`(?i)\bexecute\b|\bformat\s*\(|\bquote_ident\s*\(`)

// proc is one function of a schema as pg_proc records it.
type proc struct {
	Name     string
	Definer  bool
	Config   []string
	Language string
	Source   string
}

// procs lists the functions of schema.
func procs(t testing.TB, pool *pgxpool.Pool, schema string) []proc {
	t.Helper()
	rows, err := pool.Query(testkit.Context(t), `select p.proname::text, p.prosecdef, coalesce(p.proconfig, '{}'), l.lanname::text, p.prosrc
		  from pg_proc p join pg_language l on l.oid = p.prolang
		 where p.pronamespace = $1::regnamespace
		 order by p.proname`, schema)
	if err != nil {
		t.Fatalf("pg_proc of %s: %v", schema, err)
	}
	procs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[proc])
	if err != nil {
		t.Fatalf("pg_proc of %s: %v", schema, err)
	}
	return procs
}

func TestFunctionsAreInvokerWithFixedSearchPath(t *testing.T) {
	t.Parallel()
	custom := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, custom, testkit.MigrateCall{Schema: testkit.AppSchema})
	domains := []struct {
		schema string
		pool   *pgxpool.Pool
	}{
		{"public", testkit.NewPool(t)},
		{testkit.AppSchema, testkit.PoolFor(t, custom)},
	}
	checked := 0
	for _, d := range domains {
		procs := procs(t, d.pool, d.schema)
		var names []string
		for _, p := range procs {
			names = append(names, p.Name)
			if p.Definer {
				t.Errorf("%s.%s is SECURITY DEFINER", d.schema, p.Name)
			}
			if p.Language == "sql" {
				// A derived run state: TestDerivedRunStatesAreInlinedPredicates.
				checked++
				continue
			}
			if paths := searchPaths(p.Config); len(paths) != 1 || paths[0] != "search_path="+d.schema {
				t.Errorf("%s.%s proconfig = %q, want one search_path=%s", d.schema, p.Name, p.Config, d.schema)
			}
			if p.Language != "plpgsql" {
				t.Errorf("%s.%s is written in %s, want plpgsql", d.schema, p.Name, p.Language)
			}
			if m := dynamicSQL.FindString(p.Source); m != "" {
				t.Errorf("%s.%s builds SQL at run time (%q)", d.schema, p.Name, m)
			}
			checked++
		}
		if want := docketFunctions(t); !slices.Equal(names, want) {
			t.Fatalf("schema %s holds functions %v, want %v", d.schema, names, want)
		}
	}
	t.Logf("%d functions in %d schemas: SECURITY INVOKER, search_path bound to their own schema (derived run states excepted), no dynamic SQL",
		checked, len(domains))
}

// searchPaths returns the search_path entries of a proconfig.
func searchPaths(config []string) []string {
	var out []string
	for _, c := range config {
		if strings.HasPrefix(c, "search_path=") {
			out = append(out, c)
		}
	}
	return out
}
