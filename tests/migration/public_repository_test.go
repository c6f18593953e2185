package migration

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// queryFile is one query of db/queries as sqlc reads it: its name, its
// command (one, many, exec, execrows) and the file that holds it.
type queryFile struct {
	name, command, file string
}

var nameLine = regexp.MustCompile(`^-- name: (\w+) :(\w+)`)

// queriesIn reads the query names of the .sql files directly in dir, the
// way sqlc does (it does not descend into subdirectories).
func queriesIn(t *testing.T, dir string) []queryFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testkit.ModuleRoot(t), dir, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var queries []queryFile
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		scanner := bufio.NewScanner(f)
		for scanner.Scan() {
			if m := nameLine.FindStringSubmatch(scanner.Text()); m != nil {
				queries = append(queries, queryFile{name: m[1], command: m[2], file: filepath.Join(dir, filepath.Base(path))})
			}
		}
		err = scanner.Err()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(queries) == 0 {
		t.Fatalf("no queries in %s", dir)
	}
	return queries
}

// queriesMethods are the exported methods of *Queries that sqlc wrote into
// the package in dir, sorted; WithTx, which every sqlc package has, aside.
func queriesMethods(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testkit.ModuleRoot(t), dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var methods []string
	for _, path := range paths {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || !fd.Name.IsExported() || fd.Name.Name == "WithTx" {
				continue
			}
			if star, ok := fd.Recv.List[0].Type.(*ast.StarExpr); ok {
				if ident, ok := star.X.(*ast.Ident); ok && ident.Name == "Queries" {
					methods = append(methods, fd.Name.Name)
				}
			}
		}
	}
	sort.Strings(methods)
	return methods
}

// setDifference is what got holds and want lacks, and what want holds and
// got lacks.
func setDifference(got, want []string) (extra, missing []string) {
	for _, name := range got {
		if !slices.Contains(want, name) {
			extra = append(extra, name)
		}
	}
	for _, name := range want {
		if !slices.Contains(got, name) {
			missing = append(missing, name)
		}
	}
	return extra, missing
}

// queryNames are the names of queries, sorted.
func queryNames(queries []queryFile) []string {
	names := make([]string, len(queries))
	for i, q := range queries {
		names[i] = q.name
	}
	sort.Strings(names)
	return names
}

// Package gen exports exactly the queries of db/queries/app and the facade's
// internal/dbgen every query of db/queries and db/queries/app, each with the
// same statement: a facade-only query never reaches gen, and a stale
// generated file shows up as an accessor no query file names.
func TestPublicRepositoryExportsOnlyTheAppQueries(t *testing.T) {
	t.Parallel()
	public := queriesIn(t, filepath.Join("db", "queries", "app"))
	facadeOnly := queriesIn(t, filepath.Join("db", "queries"))

	files := map[string]string{}
	for _, q := range append(slices.Clone(public), facadeOnly...) {
		base := filepath.Base(q.file)
		if other, ok := files[base]; ok && other != q.file {
			t.Errorf("%s and %s share a file name, so their generated files in internal/dbgen collide", other, q.file)
		}
		files[base] = q.file
	}
	publicNames := queryNames(public)
	allNames := queryNames(append(slices.Clone(public), facadeOnly...))
	for i := 1; i < len(allNames); i++ {
		if allNames[i] == allNames[i-1] {
			t.Errorf("query %s is declared twice across db/queries and db/queries/app", allNames[i])
		}
	}

	exported := queriesMethods(t, "gen")
	if extra, missing := setDifference(exported, publicNames); len(extra)+len(missing) > 0 {
		t.Errorf("*gen.Queries exports %q that db/queries/app lacks and lacks %q that it holds (run make generate)", extra, missing)
	}
	for _, q := range facadeOnly {
		if slices.Contains(exported, q.name) {
			t.Errorf("gen exports %s, a facade-only query of %s", q.name, q.file)
		}
	}
	got := queriesMethods(t, filepath.Join("internal", "dbgen"))
	if extra, missing := setDifference(got, allNames); len(extra)+len(missing) > 0 {
		t.Errorf("*dbgen.Queries exports %q that no query file declares and lacks %q (run make generate)", extra, missing)
	}

	internal := testkit.GeneratedStatements(t)
	for name, sql := range testkit.PackageStatements(t, "gen") {
		if internal[name] != sql {
			t.Errorf("gen.%s sends %q, internal/dbgen.%s %q: both must come from one query", name, sql, name, internal[name])
		}
	}
	t.Logf("gen exports %d accessors, internal/dbgen %d", len(publicNames), len(allNames))
}

// normalizeStatement drops the comments of a statement (the /*schema*/
// markers among them), empties every non-empty string literal to '?' so
// that no word inside one reads as SQL, and folds case and whitespace.
func normalizeStatement(sql string) string {
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		switch {
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
		case strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 3
		case sql[i] == '\'':
			j := i + 1
			for j < len(sql) {
				if sql[j] == '\'' && (j+1 >= len(sql) || sql[j+1] != '\'') {
					break
				}
				if sql[j] == '\'' {
					j++
				}
				j++
			}
			if j == i+1 {
				b.WriteString("''")
			} else {
				b.WriteString("'?'")
			}
			i = j
		default:
			b.WriteByte(sql[i])
		}
	}
	return strings.Join(strings.Fields(strings.ToLower(b.String())), " ")
}

var (
	writeKeyword   = regexp.MustCompile(`\b(insert|update|delete|merge|truncate|copy|call)\b`)
	lockingClause  = regexp.MustCompile(`\bfor (update|no key update|share|key share)\b`)
	functionCall   = regexp.MustCompile(`([a-z_][a-z0-9_]*) ?\(`)
	runsInsert     = regexp.MustCompile(`^insert into docket_runs\b`)
	conflictUpdate = regexp.MustCompile(`\bdo update\b`)
	wakeUp         = regexp.MustCompile(`^select pg_notify\(.*, ''\)( from .*)?;?$`)
)

// Every query of db/queries/app is of a kind an app may call without the
// facade, judged from the statement sqlc generated and the command its name
// line declares: a read (a select, or a with of selects, with no locking
// clause and no writing keyword, whose every function is stable or immutable
// in the migrated catalog), an insert into docket_runs that updates nothing
// on conflict and calls no volatile function either, or the wake-up, a
// pg_notify with an empty payload (reading the domain's schema from its
// policy row). Anything else belongs in db/queries, for
// the facade only.
func TestPublicRepositoryHoldsOnlyReadsRunInsertsAndTheWakeUp(t *testing.T) {
	t.Parallel()
	app := appPool(t)
	ctx := testkit.Context(t)
	public := queriesIn(t, filepath.Join("db", "queries", "app"))
	statements := testkit.PackageStatements(t, "gen")

	calls := map[string][]string{}
	var called []string
	for _, q := range public {
		sql, ok := statements[q.name]
		if !ok {
			t.Errorf("%s of %s has no statement in gen (run make generate)", q.name, q.file)
			continue
		}
		for _, m := range functionCall.FindAllStringSubmatch(normalizeStatement(sql), -1) {
			calls[q.name] = append(calls[q.name], m[1])
			called = append(called, m[1])
		}
	}
	// A name the catalog lacks is a keyword or construct that looks like a
	// call (in, exists, coalesce, values); an overloaded name counts as
	// volatile when any of its overloads is.
	volatile := map[string]bool{}
	rows, err := app.Query(ctx, `
select p.proname::text, bool_or(p.provolatile = 'v')
  from pg_catalog.pg_proc p
 where p.proname = any($1::text[])
   and p.pronamespace in ('docket'::regnamespace, 'pg_catalog'::regnamespace)
 group by p.proname`, called)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		var isVolatile bool
		if err := rows.Scan(&name, &isVolatile); err != nil {
			t.Fatal(err)
		}
		volatile[name] = isVolatile
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if _, ok := volatile["docket_run_phase"]; !ok {
		t.Fatalf("the catalog of schema docket lacks docket_run_phase: %v", volatile)
	}

	for _, q := range public {
		if _, ok := statements[q.name]; !ok {
			continue
		}
		sql := normalizeStatement(statements[q.name])
		var volatileCalls []string
		for _, name := range calls[q.name] {
			if volatile[name] && !slices.Contains(volatileCalls, name) {
				volatileCalls = append(volatileCalls, name)
			}
		}
		switch {
		case wakeUp.MatchString(sql):
			if q.command != "exec" || !slices.Equal(volatileCalls, []string{"pg_notify"}) {
				t.Errorf("%s (%s, :%s) notifies but is not the bare wake-up (volatile calls %q): %s", q.name, q.file, q.command, volatileCalls, sql)
			}
		case strings.HasPrefix(sql, "select ") || strings.HasPrefix(sql, "with "):
			if q.command != "one" && q.command != "many" {
				t.Errorf("%s (%s) is a select run as :%s, which discards its rows: not a read", q.name, q.file, q.command)
			}
			if m := lockingClause.FindString(sql); m != "" {
				t.Errorf("%s (%s) locks rows (%s): facade only", q.name, q.file, m)
			}
			if m := writeKeyword.FindString(lockingClause.ReplaceAllString(sql, "")); m != "" {
				t.Errorf("%s (%s) writes (%s): facade only", q.name, q.file, m)
			}
			if len(volatileCalls) > 0 {
				t.Errorf("%s (%s) calls volatile %q, which may write: facade only", q.name, q.file, volatileCalls)
			}
		case runsInsert.MatchString(sql):
			rest := strings.TrimPrefix(sql, "insert")
			if m := writeKeyword.FindString(rest); m != "" || conflictUpdate.MatchString(rest) {
				t.Errorf("%s (%s) inserts runs but also writes otherwise (%q): facade only", q.name, q.file, m)
			}
			if m := lockingClause.FindString(sql); m != "" {
				t.Errorf("%s (%s) locks rows (%s): facade only", q.name, q.file, m)
			}
			if len(volatileCalls) > 0 {
				t.Errorf("%s (%s) calls volatile %q: facade only", q.name, q.file, volatileCalls)
			}
		default:
			first, _, _ := strings.Cut(sql, " ")
			t.Errorf("%s (%s) is a %s statement, neither a read, an insert into docket_runs nor the wake-up: facade only", q.name, q.file, first)
		}
	}
}
