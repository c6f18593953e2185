package migration

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// docketFunctions are the functions a migrated Docket schema holds.
var docketFunctions = []string{
	"docket_claim_partitions_guard",
	"docket_claim_partitions_schedule",
	"docket_claim_precheck",
	"docket_claim_schedule_guard",
	"docket_guard_truncate",
	"docket_legacy_claim",
	"docket_run_phase",
	"docket_runs_guard_scope",
	"docket_runs_track_delete",
	"docket_runs_track_insert",
	"docket_runs_track_status",
	"docket_runs_wake_partition",
	"docket_tenant_fair_claim",
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
		if len(names) != len(docketFunctions) {
			t.Fatalf("schema %s holds functions %v, want %v", d.schema, names, docketFunctions)
		}
		for i := range names {
			if names[i] != docketFunctions[i] {
				t.Fatalf("schema %s holds functions %v, want %v", d.schema, names, docketFunctions)
			}
		}
	}
	t.Logf("%d functions in %d schemas: SECURITY INVOKER, search_path bound to their own schema, no dynamic SQL", checked, len(domains))
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
