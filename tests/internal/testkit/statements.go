package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/internal/sqlschema"
)

// ModuleRoot is the library module's directory (the tests module's parent),
// found from this file.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testkit: no caller information for the module root")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// GeneratedStatements are the statements of package internal/dbgen by query
// name, as sqlc wrote them into internal/dbgen/*.sql.go: the whole query set
// the facade can send (gen's statements are a subset of it), read from the
// generated source rather than listed.
func GeneratedStatements(t testing.TB) map[string]string {
	t.Helper()
	return PackageStatements(t, filepath.Join("internal", "dbgen"))
}

// PackageStatements are the statements sqlc wrote into the *.sql.go files of
// the generated package in dir (relative to the module root), by query name.
func PackageStatements(t testing.TB, dir string) map[string]string {
	t.Helper()
	statements := map[string]string{}
	for _, file := range parseGoFiles(t, filepath.Join(ModuleRoot(t), dir), "*.sql.go") {
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					sql, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s constant %s: %v", dir, name.Name, err)
					}
					if StatementName(sql) != name.Name {
						t.Fatalf("%s constant %s does not start with its sqlc name line: %.60q", dir, name.Name, sql)
					}
					statements[name.Name] = sql
				}
			}
		}
	}
	if len(statements) == 0 {
		t.Fatalf("testkit: found no generated statements in %s", dir)
	}
	return statements
}

// StatementName is the sqlc query name a generated statement starts with
// ("-- name: InsertRun :one"), or "" for any other statement.
func StatementName(sql string) string {
	rest, ok := strings.CutPrefix(sql, "-- name: ")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, " ")
	return name
}

// FacadeStatements are the names of the generated statements that the
// facade's packages (docket, console, dockettest) name in their non-test
// source, sorted: every statement they can send.
func FacadeStatements(t testing.TB) []string {
	t.Helper()
	generated := GeneratedStatements(t)
	used := map[string]bool{}
	for _, dir := range []string{"docket", "console", "dockettest"} {
		for _, file := range parseGoFiles(t, filepath.Join(ModuleRoot(t), dir), "*.go") {
			ast.Inspect(file, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if _, ok := generated[sel.Sel.Name]; ok {
						used[sel.Sel.Name] = true
					}
				}
				return true
			})
		}
	}
	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// MigrationCreated are the relations, types and functions that Docket's
// migrations and the declarations sqlc reads beside them (the ledgers, the
// claim functions' result shape) create, by sqlschema.Created.
func MigrationCreated(t testing.TB) []string {
	t.Helper()
	root := ModuleRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "db", "schema", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v (%d files)", err, len(files))
	}
	declarations, err := filepath.Glob(filepath.Join(root, "db", "sqlc", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, declarations...)
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.WriteByte('\n')
	}
	return sqlschema.Created(all.String())
}

// parseGoFiles parses the non-test Go files of dir matching pattern.
func parseGoFiles(t testing.TB, dir, pattern string) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
