package migration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/sqlschema"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// decoySQLState is what every decoy raises when something reaches it.
const decoySQLState = "DKDCY"

// reachDatabase returns a pool on a fresh database whose search_path is
// only searchPath (created empty), with Docket migrated into schema docket
// and dbmate's ledger beside it, since LegacyLedgerVersions names it there.
func reachDatabase(t *testing.T, searchPath string, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(testkit.MigrationURLWithSearchPath(t, pgtest.NewEmptyDatabase(t), searchPath))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(testkit.Context(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	testkit.ExecSQL(t, pool, "create schema "+pgx.Identifier{searchPath}.Sanitize())
	if err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "docket"}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	return pool
}

// ownConn is a connection of pool for the test alone, closed when it ends.
func ownConn(t *testing.T, pool *pgxpool.Pool) *pgx.Conn {
	t.Helper()
	pooled, err := pool.Acquire(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	conn := pooled.Hijack()
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// schemaNames are the schemas of the database the session is in, and
// pg_temp, which names the session's temporary schema.
func schemaNames(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(testkit.Context(t), `select nspname::text from pg_namespace union select 'pg_temp' order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Docket's relocation rests on one property: everything it runs names only
// its own schema and pg_catalog. Every generated statement, qualified as
// under Config.Schema, parses with an empty search_path and depends on
// nothing elsewhere; every object the migrations install depends on
// nothing elsewhere; every function body is bound to its schema and names
// no other.
func TestEveryStatementStaysInItsSchema(t *testing.T) {
	t.Parallel()
	pool := reachDatabase(t, "app", nil)
	ctx := testkit.Context(t)
	ledger, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "db", "sqlc", "dbmate_schema_migrations.sql"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.ExecSQL(t, pool, "set search_path = docket; "+string(ledger)+"; reset search_path")
	// Another schema with objects named like Docket's, which only a
	// reference outside docket could resolve to.
	testkit.ExecSQL(t, pool, `create schema outside; create table outside.docket_runs (like docket.docket_runs)`)
	conn := ownConn(t, pool)
	checker, err := newReachChecker(ctx, conn, "docket")
	if err != nil {
		t.Fatal(err)
	}

	statements := testkit.GeneratedStatements(t)
	names := make([]string, 0, len(statements))
	for name := range statements {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		outside, err := checker.statementReach(ctx, sqlschema.Qualify(statements[name], "docket"))
		if err != nil {
			t.Errorf("%s qualified for schema docket: %v", name, err)
		} else if len(outside) > 0 {
			t.Errorf("%s reaches outside schema docket: %q", name, outside)
		}
	}
	if checker.count != len(statements) {
		t.Fatalf("checked %d of the %d generated statements", checker.count, len(statements))
	}

	if outside, err := catalogReach(ctx, conn, "docket"); err != nil || len(outside) > 0 {
		t.Errorf("objects of schema docket depend on objects elsewhere: %q, %v", outside, err)
	}

	// Every function the sources in db/functions define is installed, bound
	// to the schema and names no other schema in its body.
	want, err := db.SourceFunctionNames()
	if err != nil {
		t.Fatal(err)
	}
	schemas := schemaNames(t, conn)
	rows, err := conn.Query(ctx, `select p.proname::text, p.prosrc, p.prosecdef, coalesce(p.proconfig, '{}'), l.lanname = 'sql'
  from pg_proc p join pg_language l on l.oid = p.prolang
 where p.pronamespace = to_regnamespace('docket') order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	var installed []string
	for rows.Next() {
		var name, body string
		var definer, derivedState bool
		var config []string
		if err := rows.Scan(&name, &body, &definer, &config, &derivedState); err != nil {
			t.Fatal(err)
		}
		installed = append(installed, name)
		// Other settings (a plan cache mode) are the function's own; the
		// search_path must be the schema and nothing else. A derived run
		// state has no setting at all (TestDerivedRunStatesAreInlinedPredicates).
		if paths := searchPaths(config); definer || !derivedState && !slices.Equal(paths, []string{"search_path=docket"}) {
			t.Errorf("%s: security definer %v, settings %q; want security invoker with search_path=docket alone", name, definer, config)
		}
		if outside := bodyReach(body, "docket", schemas); len(outside) > 0 {
			t.Errorf("the body of %s reaches outside schema docket: %q", name, outside)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	if !slices.Equal(installed, want) {
		t.Fatalf("schema docket holds the functions %q, db/functions defines %q", installed, want)
	}

	// Every trigger on a Docket table runs one of those functions.
	var triggers, inSchema int64
	if err := conn.QueryRow(ctx, `select count(*), count(*) filter (where p.pronamespace = to_regnamespace('docket'))
  from pg_trigger g join pg_class c on c.oid = g.tgrelid join pg_proc p on p.oid = g.tgfoid
 where c.relnamespace = to_regnamespace('docket') and not g.tgisinternal`).Scan(&triggers, &inSchema); err != nil {
		t.Fatal(err)
	}
	if triggers == 0 || inSchema != triggers {
		t.Fatalf("%d of the %d triggers on Docket's tables run a function of schema docket", inSchema, triggers)
	}
}

// The checkers fail on every way out of a schema: a statement naming
// another schema's table, column, function, type or regclass constant at
// any depth, a generated statement qualified for the wrong schema or with a
// marker left out, a body naming another schema (bare, quoted or spaced)
// or building SQL at run time, and an installed object whose default,
// check, column type, foreign key or trigger lives elsewhere.
func TestSchemaReachCheckersCatchEveryWayOut(t *testing.T) {
	t.Parallel()
	pool := reachDatabase(t, "app", nil)
	ctx := testkit.Context(t)
	testkit.ExecSQL(t, pool, `create schema outside;
create table outside.docket_runs (like docket.docket_runs);
create table outside.keys (id integer constraint keys_pkey primary key);
create function outside.f() returns integer language sql as 'select 1';
create function outside.trg() returns trigger language plpgsql as 'begin return null; end';
create type outside.ty as (v integer)`)
	conn := ownConn(t, pool)
	checker, err := newReachChecker(ctx, conn, "docket")
	if err != nil {
		t.Fatal(err)
	}

	statements := map[string][]string{
		`select r.id from docket.docket_runs r where r.status = $1 for update skip locked`: nil,
		`select count(*) from outside.docket_runs`:                                         {"table outside.docket_runs"},
		`with x as (select outside.f() as v) select x.v from x`:                            {"function outside.f()"},
		`select 'outside.docket_runs'::regclass`:                                           {"table outside.docket_runs"},
		`select null::outside.ty`:                                                          {"type outside.ty"},
		// A relation whose columns are named is recorded by its columns.
		`update docket.docket_runs set step = 1 where id in (select o.id from outside.docket_runs o)`: {"column id of table outside.docket_runs"},
		`insert into outside.keys (id) values ($1)`:                                                   {"column id of table outside.keys"},
	}
	for sql, want := range statements {
		got, err := checker.statementReach(ctx, sql)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("statementReach(%q) = %q, %v; want %q", sql, got, err, want)
		}
	}
	getRun := testkit.GeneratedStatements(t)["GetRunFence"]
	got, err := checker.statementReach(ctx, sqlschema.Qualify(getRun, "outside"))
	if err != nil || !slices.Contains(got, "column run_id of table outside.docket_runs") {
		t.Errorf("GetRunFence qualified for schema outside: %q, %v; want column run_id of table outside.docket_runs among them", got, err)
	}
	for _, object := range got {
		if !strings.HasSuffix(object, " of table outside.docket_runs") {
			t.Errorf("GetRunFence qualified for schema outside reaches %s", object)
		}
	}
	unmarked := sqlschema.Qualify(strings.Replace(getRun, sqlschema.Marker, "", 1), "docket")
	if _, err := checker.statementReach(ctx, unmarked); err == nil || !strings.Contains(err.Error(), `relation "docket_runs" does not exist`) {
		t.Errorf("GetRunFence with its marker left out: %v; want the unresolved relation", err)
	}
	if _, err := checker.statementReach(ctx, `select count(*) from docket_runs`); err == nil ||
		!strings.Contains(err.Error(), `relation "docket_runs" does not exist (SQLSTATE 42P01)`) {
		t.Errorf("an unqualified relation: %v; want it unresolved", err)
	}

	schemas := schemaNames(t, conn)
	bodies := map[string][]string{
		`begin insert into docket.docket_runs (run_id) select new.run_id; perform pg_catalog.now(); return r.x; end`: nil,
		`begin perform 1 from outside.docket_runs; end`:                                                              {"outside.docket_runs"},
		`begin perform "outside"."docket_runs".id from "outside"."docket_runs"; end`:                                 {"outside.docket_runs", "outside.docket_runs"},
		`begin perform 1 from Outside . Docket_Runs; end`:                                                            {"outside.docket_runs"},
		`begin perform 'public.keys'::regclass; end`:                                                                 {"public.keys"},
		`begin perform 1 from pg_temp.docket_runs, app.x; end`:                                                       {"pg_temp.docket_runs", "app.x"},
		`begin perform 1 from mydb.outside.docket_runs; end`:                                                         {"outside.docket_runs"},
		`begin perform 1 from docket_outside.t, xoutside.t; end`:                                                     nil,
		`begin execute format('select 1 from %I', v_table); end`:                                                     {"dynamic SQL: execute", "dynamic SQL: format("},
	}
	for body, want := range bodies {
		if got := bodyReach(body, "docket", schemas); !slices.Equal(got, want) {
			t.Errorf("bodyReach(%q) = %q, want %q", body, got, want)
		}
	}

	testkit.ExecSQL(t, pool, `create schema leaky;
create table leaky.t (
    a integer default outside.f(),
    b outside.ty,
    c integer constraint t_c_fkey references outside.keys (id),
    d integer constraint t_d_check check (d > outside.f()));
create trigger t_trg after insert on leaky.t for each statement execute function outside.trg()`)
	got, err = catalogReach(ctx, conn, "leaky")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"column b of table leaky.t -> type outside.ty",
		"constraint t_c_fkey on table leaky.t -> column id of table outside.keys",
		"constraint t_c_fkey on table leaky.t -> index outside.keys_pkey",
		"constraint t_d_check on table leaky.t -> function outside.f()",
		"default value for column a of table leaky.t -> function outside.f()",
		"trigger t_trg on table leaky.t -> function outside.trg()",
	}
	if !slices.Equal(got, want) {
		t.Errorf("catalogReach(leaky) =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// reachRecorder records, besides what statementRecorder does, every
// statement of any kind that failed on a decoy.
type reachRecorder struct {
	*statementRecorder
	decoyMu sync.Mutex
	reached []string
}

func (r *reachRecorder) noteDecoy(sql string, err error) {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == decoySQLState {
		r.decoyMu.Lock()
		defer r.decoyMu.Unlock()
		r.reached = append(r.reached, fmt.Sprintf("%s: %.80q", pgErr.Message, sql))
	}
}

// TraceQueryEnd implements pgx.QueryTracer.
func (r *reachRecorder) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	sql, _ := ctx.Value(recordedSQL{}).(string)
	r.noteDecoy(sql, data.Err)
	r.statementRecorder.TraceQueryEnd(ctx, conn, data)
}

// TraceBatchQuery implements pgx.BatchTracer.
func (r *reachRecorder) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	r.noteDecoy(data.SQL, data.Err)
	r.statementRecorder.TraceBatchQuery(ctx, conn, data)
}

// plantDecoys fills schema outside with an object for every relation, type
// and function name of schema docket, and for names an app commonly uses,
// each of which raises decoySQLState when read, written or called. None
// depends on schema docket, so Docket's migrations can still drop and
// recreate what they own.
func plantDecoys(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	ctx := testkit.Context(t)
	testkit.ExecSQL(t, pool, fmt.Sprintf(`create function outside.decoy_reached(p_name text) returns table (decoy text)
    language plpgsql as $$
begin
    raise exception using errcode = '%s', message = format('decoy outside.%%s reached', p_name);
end;
$$`, decoySQLState))
	rows, err := pool.Query(ctx, `select c.relname::text from pg_class c
 where c.relnamespace = to_regnamespace('docket')
union select unnest(array['runs', 'jobs', 'tenants', 'schedules', 'policy', 'schema_migrations', 'settings'])
order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	relations, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range relations {
		testkit.ExecSQL(t, pool, fmt.Sprintf(`create view outside.%s as select d.decoy from outside.decoy_reached(%s) as d`,
			pgx.Identifier{name}.Sanitize(), quoteLiteral(name)))
	}
	rows, err = pool.Query(ctx, `select p.proname::text, pg_get_function_arguments(p.oid), pg_get_function_result(p.oid)
  from pg_proc p where p.pronamespace = to_regnamespace('docket') order by 1`)
	if err != nil {
		t.Fatal(err)
	}
	type signature struct{ Name, Args, Result string }
	functions, err := pgx.CollectRows(rows, pgx.RowToStructByPos[signature])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range functions {
		// A type of schema docket in the signature (a table's row type)
		// becomes its decoy's, planted above, so no decoy depends on docket.
		args, result := strings.ReplaceAll(f.Args, "docket.", "outside."), strings.ReplaceAll(f.Result, "docket.", "outside.")
		testkit.ExecSQL(t, pool, fmt.Sprintf(`create function outside.%s(%s) returns %s language plpgsql as $$
begin
    perform outside.decoy_reached(%s);
end;
$$`, pgx.Identifier{f.Name}.Sanitize(), args, result, quoteLiteral(f.Name+"()")))
	}
	return len(relations) + len(functions)
}

// quoteLiteral is s as a SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// The property at run time: the whole public-API scenario, with
// Config.Schema, on a pool whose search_path is a schema of decoys named
// like every Docket object (and like common tables). A statement, trigger
// or function that resolved a name through the caller's search_path instead
// of its own schema would reach a decoy, which raises; none does, and no
// statement fails.
func TestEveryStatementStaysInItsSchemaAtRunTime(t *testing.T) {
	t.Parallel()
	recorder := &reachRecorder{statementRecorder: newStatementRecorder()}
	pool := reachDatabase(t, "outside", recorder)
	if planted := plantDecoys(t, pool); planted < 20 {
		t.Fatalf("planted %d decoys", planted)
	}
	// A decoy raises when reached through the pool's search_path.
	var answer string
	if err := pool.QueryRow(testkit.Context(t), `select count(*)::text from docket_runs`).Scan(&answer); testkit.GuardSQLState(err) != decoySQLState ||
		!strings.Contains(err.Error(), "decoy outside.docket_runs reached") {
		t.Fatalf("an unqualified read of docket_runs = %q, %v; want the decoy's error", answer, err)
	}
	recorder.decoyMu.Lock()
	recorder.reached = nil
	recorder.decoyMu.Unlock()

	everyStatement(t, pool)

	recorder.decoyMu.Lock()
	defer recorder.decoyMu.Unlock()
	for _, reached := range recorder.reached {
		t.Errorf("a statement reached a decoy: %s", reached)
	}
	recorder.statementRecorder.mu.Lock()
	defer recorder.statementRecorder.mu.Unlock()
	for _, name := range testkit.FacadeStatements(t) {
		if recorder.sent[name] == 0 {
			t.Errorf("the scenario never sent %s", name)
		}
	}
	for name, err := range recorder.failed {
		t.Errorf("%s failed: %v", name, err)
	}
}
