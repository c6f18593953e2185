package migration

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/docketrun/docket-go/internal/sqlschema"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// catalogNamesQuery lists what a query can name like a relation in one
// schema: tables, views, sequences (but those a column owns, which no
// query names), composite types and functions.
const catalogNamesQuery = `
select c.relname::text from pg_class c
 where c.relnamespace = $1::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f', 'c')
   and not (c.relkind = 'S' and exists (select from pg_depend d
                                         where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype in ('a', 'i')))
union
select p.proname::text from pg_proc p where p.pronamespace = $1::regnamespace
order by 1`

// Every relation, type and function the migrations create (read from the
// catalog of a migrated schema, which must agree with what the migration
// files say they create) carries the schema marker wherever a generated
// statement names it, and every generated statement, qualified as under
// Config.Schema, prepares on a pool whose search_path lacks the schema.
func TestEveryMigratedRelationIsMarkedInEveryStatement(t *testing.T) {
	t.Parallel()
	app := appPool(t)
	ctx := testkit.Context(t)
	// The ledger of another migration tool, which the migrator reads when a
	// schema has one, lives in Docket's schema too.
	dbmateLedger, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "db", "sqlc", "dbmate_schema_migrations.sql"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.ExecSQL(t, app, "set search_path = docket; "+string(dbmateLedger)+"; reset search_path")
	rows, err := app.Query(ctx, catalogNamesQuery, "docket")
	if err != nil {
		t.Fatal(err)
	}
	var catalog []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		catalog = append(catalog, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	created := testkit.MigrationCreated(t)
	for _, name := range catalog {
		if !slices.Contains(created, name) {
			t.Errorf("schema docket holds %s, which no create statement of db/schema or db/sqlc names", name)
		}
	}
	if !slices.Contains(catalog, "docket_schedules") || !slices.Contains(catalog, "docket_runs") {
		t.Fatalf("the catalog listing missed Docket's tables: %q", catalog)
	}

	statements := testkit.GeneratedStatements(t)
	names := make([]string, 0, len(statements))
	for name := range statements {
		names = append(names, name)
	}
	sort.Strings(names)
	conn, err := app.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, name := range names {
		sql := statements[name]
		if missing := sqlschema.Unmarked(sql, created); len(missing) > 0 {
			t.Errorf("%s names %q without the schema marker %s", name, missing, sqlschema.Marker)
			continue
		}
		if _, err := conn.Conn().Prepare(ctx, "", sqlschema.Qualify(sql, "docket")); err != nil {
			t.Errorf("%s qualified for schema docket does not prepare with search_path app,public: %v", name, err)
		}
	}
}
