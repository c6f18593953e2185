package migration

import (
	"errors"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A Docket function whose installed body is not the one the binary embeds
// (edited by hand, or installed by an older copy of a migration) makes Open
// and NewAdmin refuse with ErrSchemaMismatch naming the function and the
// source file it should match; nothing else of the schema is touched.
func TestStartupRejectsChangedFunctionBody(t *testing.T) {
	t.Parallel()
	functions, err := db.InstalledFunctions()
	if err != nil {
		t.Fatal(err)
	}
	names, err := db.SourceFunctionNames()
	if err != nil {
		t.Fatal(err)
	}
	if len(functions) != len(names) {
		t.Fatalf("the binary installs %d functions, want the %d named by db/functions", len(functions), len(names))
	}
	for _, fn := range functions {
		t.Run(fn.Name, func(t *testing.T) {
			t.Parallel()
			pool := testkit.NewPool(t)
			var def string
			if err := pool.QueryRow(testkit.Context(t),
				`select pg_get_functiondef(p.oid) from pg_proc p
				  where p.proname = $1 and p.pronamespace = current_schema()::regnamespace`, fn.Name).Scan(&def); err != nil {
				t.Fatal(err)
			}
			// The same function with one more comment line at the end of its body.
			const closing = "\n$function$"
			at := strings.LastIndex(def, closing)
			if at < 0 {
				t.Fatalf("unexpected definition of %s:\n%s", fn.Name, def)
			}
			testkit.ExecSQL(t, pool, def[:at]+"\n-- edited by hand"+def[at:])
			startupExpectMismatch(t, pool, true)
			_, err := docket.Open(testkit.Context(t), pool, testkit.TenantFairConfig(4))
			want := "function " + fn.Name + " differs from " + fn.File + " (installed body md5 "
			if !errors.Is(err, docket.ErrSchemaMismatch) || !strings.Contains(err.Error(), want) {
				t.Fatalf("Open = %v; want ErrSchemaMismatch containing %q", err, want)
			}
		})
	}
}
