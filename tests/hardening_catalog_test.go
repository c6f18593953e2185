package tests

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/internal/testkit"
)

// hardDocketFunctions are the functions a migrated Docket schema holds.
var hardDocketFunctions = []string{
	"docket_claim_partitions_guard",
	"docket_claim_partitions_schedule",
	"docket_claim_schedule_guard",
	"docket_guard_truncate",
	"docket_legacy_claim",
	"docket_runs_guard_scope",
	"docket_runs_track_delete",
	"docket_runs_track_insert",
	"docket_runs_track_status",
	"docket_runs_wake_partition",
	"docket_tenant_fair_claim",
}

// hardDynamicSQL matches what building SQL text at run time needs in
// PL/pgSQL: EXECUTE, or format() and quote_ident() to splice identifiers.
// (quote_literal in an error message builds no SQL.)
var hardDynamicSQL = regexp.MustCompile(`(?i)\bexecute\b|\bformat\s*\(|\bquote_ident\s*\(`)

// hardProc is one function of a schema as pg_proc records it.
type hardProc struct {
	Name     string
	Definer  bool
	Config   []string
	Language string
	Source   string
}

// hardProcs lists the functions of schema.
func hardProcs(t testing.TB, pool *pgxpool.Pool, schema string) []hardProc {
	t.Helper()
	rows, err := pool.Query(testkit.Context(t), `select p.proname::text, p.prosecdef, coalesce(p.proconfig, '{}'), l.lanname::text, p.prosrc
		  from pg_proc p join pg_language l on l.oid = p.prolang
		 where p.pronamespace = $1::regnamespace
		 order by p.proname`, schema)
	if err != nil {
		t.Fatalf("pg_proc of %s: %v", schema, err)
	}
	procs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[hardProc])
	if err != nil {
		t.Fatalf("pg_proc of %s: %v", schema, err)
	}
	return procs
}

func TestHardeningFunctionsAreInvokerWithFixedSearchPath(t *testing.T) {
	t.Parallel()
	custom := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, custom, docket.MigrateOptions{Schema: testkit.AppSchema})
	domains := []struct {
		schema string
		pool   *pgxpool.Pool
	}{
		{"public", testkit.NewPool(t)},
		{testkit.AppSchema, testkit.PoolFor(t, custom)},
	}
	checked := 0
	for _, d := range domains {
		procs := hardProcs(t, d.pool, d.schema)
		var names []string
		for _, p := range procs {
			names = append(names, p.Name)
			if p.Definer {
				t.Errorf("%s.%s is SECURITY DEFINER", d.schema, p.Name)
			}
			if paths := hardSearchPaths(p.Config); len(paths) != 1 || paths[0] != "search_path="+d.schema {
				t.Errorf("%s.%s proconfig = %q, want one search_path=%s", d.schema, p.Name, p.Config, d.schema)
			}
			if p.Language != "plpgsql" {
				t.Errorf("%s.%s is written in %s, want plpgsql", d.schema, p.Name, p.Language)
			}
			if m := hardDynamicSQL.FindString(p.Source); m != "" {
				t.Errorf("%s.%s builds SQL at run time (%q)", d.schema, p.Name, m)
			}
			checked++
		}
		if len(names) != len(hardDocketFunctions) {
			t.Fatalf("schema %s holds functions %v, want %v", d.schema, names, hardDocketFunctions)
		}
		for i := range names {
			if names[i] != hardDocketFunctions[i] {
				t.Fatalf("schema %s holds functions %v, want %v", d.schema, names, hardDocketFunctions)
			}
		}
	}
	t.Logf("%d functions in %d schemas: SECURITY INVOKER, search_path bound to their own schema, no dynamic SQL", checked, len(domains))
}

// hardSearchPaths returns the search_path entries of a proconfig.
func hardSearchPaths(config []string) []string {
	var out []string
	for _, c := range config {
		if strings.HasPrefix(c, "search_path=") {
			out = append(out, c)
		}
	}
	return out
}
