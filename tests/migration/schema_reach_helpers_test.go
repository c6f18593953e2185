package migration

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
)

// A Docket domain can move to any server, or be a Citus distributed schema,
// only if nothing it runs names an object outside its own schema and
// pg_catalog. The checkers below find such references three ways: in the
// parse trees of statements (pg_depend of a probe function whose body is
// the statement), in the catalog dependencies of what the migrations
// installed, and in the source of plpgsql bodies, which PostgreSQL parses
// only when they run.

// Schemas the checkers create for themselves: probe functions live in
// reachProbeSchema, and reachEmptySchema is the only entry of the checking
// session's search_path, so an unqualified name resolves to pg_catalog or
// to nothing.
const (
	reachProbeSchema = "reach_probe"
	reachEmptySchema = "reach_nothing"
)

// reachChecker lists the objects statements reach outside schema home.
type reachChecker struct {
	conn  *pgx.Conn
	home  string
	count int
}

// newReachChecker prepares conn, a session of its own that the checker may
// change for good, to check statements against home.
func newReachChecker(ctx context.Context, conn *pgx.Conn, home string) (*reachChecker, error) {
	if major := pgtest.ServerMajorVersion(); major < 14 {
		// make test-pg PG=13 leaves the tests that check statements this way out.
		return nil, fmt.Errorf("the statement check needs PostgreSQL 14 or newer (SQL-standard function bodies record their dependencies); the server is %d", major)
	}
	setup := fmt.Sprintf(`create schema if not exists %[1]s; create schema if not exists %[2]s; set search_path = %[2]s`,
		reachProbeSchema, reachEmptySchema)
	if _, err := conn.Exec(ctx, setup); err != nil {
		return nil, fmt.Errorf("preparing the checking session: %w", err)
	}
	return &reachChecker{conn: conn, home: home}, nil
}

// outsideObjects lists, described by pg_describe_object, the objects that
// function probe depends on outside home and pg_catalog, leaving out the
// probe's own schema. Built-in objects are pinned and never recorded, so
// what PostgreSQL itself provides is never reported; languages belong to no
// schema and exist on every server.
const outsideObjects = `
select pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
  from pg_depend d
       cross join lateral pg_identify_object(d.refclassid, d.refobjid, d.refobjsubid) r
 where d.classid = 'pg_proc'::regclass and d.objid = to_regprocedure($1)
   and not (d.refclassid = 'pg_namespace'::regclass and d.refobjid = to_regnamespace($2))
   and r.type <> 'language'
   and coalesce(r.schema, case when r.type = 'schema' then r.identity end, '') not in ($3, 'pg_catalog')
 order by 1`

// statementReach returns the objects outside home and pg_catalog that sql,
// parsed with an empty search_path, refers to. A name that does not resolve
// without search_path, such as an unqualified Docket relation, is an error.
//
// The statement becomes the body of a SQL-standard function (begin atomic),
// whose parse tree PostgreSQL keeps with a dependency on every relation,
// column, function, operator, type and regclass constant in it, at any depth
// of subqueries and CTEs; those dependencies are the answer.
func (c *reachChecker) statementReach(ctx context.Context, sql string) ([]string, error) {
	described, err := c.conn.Prepare(ctx, "", sql)
	if err != nil {
		return nil, fmt.Errorf("does not parse with search_path %s: %w", reachEmptySchema, err)
	}
	var params []string
	if err := c.conn.QueryRow(ctx, `select coalesce(array_agg(format_type(u.oid, null) order by u.n), '{}')
  from unnest($1::oid[]) with ordinality as u(oid, n)`, described.ParamOIDs).Scan(&params); err != nil {
		return nil, fmt.Errorf("naming the parameter types: %w", err)
	}
	returns := "setof record"
	if len(described.Fields) == 0 {
		returns = "void"
	}
	c.count++
	probe := fmt.Sprintf("%s.statement_%d(%s)", reachProbeSchema, c.count, strings.Join(params, ", "))
	body := strings.TrimRight(strings.TrimSpace(sql), ";")
	create := fmt.Sprintf("create function %s returns %s language sql begin atomic\n%s;\nend", probe, returns, body)
	if _, err := c.conn.Exec(ctx, create); err != nil {
		return nil, fmt.Errorf("as a function body: %w", err)
	}
	defer func() { _, _ = c.conn.Exec(ctx, "drop function "+probe) }()
	rows, err := c.conn.Query(ctx, outsideObjects, probe, reachProbeSchema, c.home)
	if err != nil {
		return nil, fmt.Errorf("reading the dependencies: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// catalogReach lists, as "dependent -> referenced" in pg_describe_object
// terms, every dependency of an object of schema home on an object outside
// home and pg_catalog. Home's objects are its relations, functions, types
// and constraints, and everything that depends on them automatically or
// internally: column defaults, triggers, indexes, rules, TOAST tables. So a
// trigger bound to another schema's function, a default or check calling
// one, a foreign key to another schema's table or a column of another
// schema's type are each reported.
func catalogReach(ctx context.Context, conn *pgx.Conn, home string) ([]string, error) {
	rows, err := conn.Query(ctx, `
with recursive owned(classid, objid) as (
    select 'pg_class'::regclass::oid, c.oid from pg_class c where c.relnamespace = to_regnamespace($1)
    union select 'pg_proc'::regclass::oid, p.oid from pg_proc p where p.pronamespace = to_regnamespace($1)
    union select 'pg_type'::regclass::oid, y.oid from pg_type y where y.typnamespace = to_regnamespace($1)
    union select 'pg_constraint'::regclass::oid, k.oid from pg_constraint k where k.connamespace = to_regnamespace($1)
    union
    select d.classid, d.objid
      from pg_depend d join owned o on d.refclassid = o.classid and d.refobjid = o.objid
     where d.deptype in ('a', 'i')
)
select distinct pg_describe_object(d.classid, d.objid, d.objsubid) || ' -> '
       || pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
  from owned o
       join pg_depend d on d.classid = o.classid and d.objid = o.objid
       cross join lateral pg_identify_object(d.refclassid, d.refobjid, d.refobjsubid) r
 where not exists (select from owned w where w.classid = d.refclassid and w.objid = d.refobjid)
   and r.type <> 'language'
   and coalesce(r.schema, case when r.type = 'schema' then r.identity end, '') not in ($1, 'pg_catalog')
 order by 1`, home)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// qualifiedName is a two-part name: an identifier, bare or quoted, a dot,
// and another identifier (or *).
var qualifiedName = regexp.MustCompile(`("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)\s*\.\s*("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*|\*)`)

// bodyReach returns, in order of appearance, the schema-qualified names in
// a function body whose qualifier is one of schemas but neither home nor
// pg_catalog, and each sign of SQL built at run time (dynamicSQL), whose
// names no scan of the source can know. It scans the whole source,
// string literals and comments too, since a name inside a string can still
// be resolved ('s.t'::regclass); a qualifier that is no schema (a table
// alias, a record variable, new or old) is not a reference to one. The
// caller passes every schema the server could resolve, plus pg_temp.
func bodyReach(body, home string, schemas []string) []string {
	var found []string
	for i := 0; i < len(body); {
		m := qualifiedName.FindStringSubmatchIndex(body[i:])
		if m == nil {
			break
		}
		start, end, next := i+m[2], i+m[3], i+m[4]
		// The tail of a longer bare identifier (the "b" of "ab.c") is no
		// qualifier.
		if body[start] != '"' && start > 0 && isIdentifierByte(body[start-1]) {
			i = next
			continue
		}
		if qualifier := unquoted(body[start:end]); qualifier != home && qualifier != "pg_catalog" && slices.Contains(schemas, qualifier) {
			found = append(found, qualifier+"."+unquoted(body[next:i+m[5]]))
		}
		// The second part may qualify a third (a.b.c).
		i = next
	}
	for _, m := range dynamicSQL.FindAllString(body, -1) {
		found = append(found, "dynamic SQL: "+strings.ToLower(m))
	}
	return found
}

// unquoted is the name an identifier stands for: a quoted one as written,
// a bare one folded to lower case.
func unquoted(identifier string) string {
	if strings.HasPrefix(identifier, `"`) {
		return strings.ReplaceAll(identifier[1:len(identifier)-1], `""`, `"`)
	}
	return strings.ToLower(identifier)
}

// isIdentifierByte reports whether b can continue a bare identifier.
func isIdentifierByte(b byte) bool {
	return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
