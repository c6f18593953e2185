package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// frozenTree lays out a schema directory with one migration including
// f_v1.sql and a changelog with releases 0.1.0 and 0.2.0, and returns the
// paths of the migration, the function source and the manifest.
func frozenTree(t *testing.T) (migration, source, manifestPath string) {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"schema", "functions"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	migration = filepath.Join(dir, "schema", "001_v1.sql")
	source = filepath.Join(dir, "functions", "f_v1.sql")
	manifestPath = filepath.Join(dir, "released.sum")
	writeFile(t, source, "create function f() returns int language sql as $$ select 1 $$;\n")
	writeFile(t, migration, "-- migrate:up\n-- include f_v1.sql\n-- end include\n")
	writeFile(t, filepath.Join(dir, "CHANGELOG.md"), "# Changes\n\n## [Unreleased]\n\n## [0.2.0] - 2026-12-20\n\n## [0.1.0] - 2026-12-07\n")
	return migration, source, manifestPath
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(content)
}

// runIn runs the generator over the tree of migration: a check, a
// generation, or (release not empty) the recording of that release.
func runIn(migration, manifestPath string, check bool, release string) error {
	dir := filepath.Dir(filepath.Dir(migration))
	paths := treePaths{
		schema:    filepath.Join(dir, "schema"),
		functions: filepath.Join(dir, "functions"),
		manifest:  manifestPath,
		changelog: filepath.Join(dir, "CHANGELOG.md"),
	}
	return run(paths, check, release)
}

func expectProblem(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error containing %q", err, want)
	}
}

// The open migration is edited in place until a release records it; from
// then on it is frozen, and the release it shipped with cannot gain another.
func TestOpenMigrationIsEditableUntilItsRelease(t *testing.T) {
	migration, source, manifestPath := frozenTree(t)
	if err := runIn(migration, manifestPath, false, ""); err != nil {
		t.Fatalf("generate: %v", err)
	}
	if err := runIn(migration, manifestPath, true, ""); err != nil {
		t.Fatalf("check of an open migration: %v", err)
	}
	writeFile(t, source, "create function f() returns int language sql as $$ select 2 $$;\n")
	expectProblem(t, runIn(migration, manifestPath, true, ""), "001_v1.sql is stale: run make generate")
	if err := runIn(migration, manifestPath, false, ""); err != nil {
		t.Fatalf("regenerate the open migration: %v", err)
	}
	expectProblem(t, runIn(migration, manifestPath, false, "0.3.0"), "has no section \"## [0.3.0] - YYYY-MM-DD\"")
	expectProblem(t, runIn(migration, manifestPath, false, "v1"), "is not a version x.y.z")
	if err := runIn(migration, manifestPath, false, "0.1.0"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if want := sum([]byte(readFile(t, migration))) + "  001_v1.sql  0.1.0\n"; !strings.Contains(readFile(t, manifestPath), want) {
		t.Fatalf("manifest does not record the migration:\n%s", readFile(t, manifestPath))
	}
	if err := runIn(migration, manifestPath, true, ""); err != nil {
		t.Fatalf("check after release: %v", err)
	}
	expectProblem(t, runIn(migration, manifestPath, false, "0.1.0"), "release 0.1.0 is recorded already")
}

func TestOneOpenMigrationAfterTheReleasedOnes(t *testing.T) {
	migration, _, manifestPath := frozenTree(t)
	dir := filepath.Dir(migration)
	writeFile(t, filepath.Join(dir, "002_v2.sql"), "-- migrate:up\n")
	if err := runIn(migration, manifestPath, false, "0.1.0"); err != nil {
		t.Fatalf("release: %v", err)
	}
	writeFile(t, filepath.Join(dir, "003_v3.sql"), "-- migrate:up\n")
	writeFile(t, filepath.Join(dir, "004_v4.sql"), "-- migrate:up\n")
	expectProblem(t, runIn(migration, manifestPath, true, ""), "2 open migrations (003_v3.sql, 004_v4.sql)")
	if err := os.Remove(filepath.Join(dir, "004_v4.sql")); err != nil {
		t.Fatal(err)
	}
	if err := runIn(migration, manifestPath, true, ""); err != nil {
		t.Fatalf("check with one open migration: %v", err)
	}
	writeFile(t, filepath.Join(dir, "000_v0.sql"), "-- migrate:up\n")
	if err := os.Remove(filepath.Join(dir, "003_v3.sql")); err != nil {
		t.Fatal(err)
	}
	expectProblem(t, runIn(migration, manifestPath, true, ""), "open migration 000_v0.sql sorts before released 002_v2.sql")
}

func TestManifestReleaseNeedsItsChangelogSection(t *testing.T) {
	migration, _, manifestPath := frozenTree(t)
	if err := runIn(migration, manifestPath, false, "0.2.0"); err != nil {
		t.Fatalf("release: %v", err)
	}
	changelog := filepath.Join(filepath.Dir(filepath.Dir(migration)), "CHANGELOG.md")
	writeFile(t, changelog, "# Changes\n\n## [0.1.0] - 2026-12-07\n")
	expectProblem(t, runIn(migration, manifestPath, true, ""), "names release 0.2.0, which")
}

func TestReleasedMigrationIsNeverRewritten(t *testing.T) {
	migration, source, manifestPath := frozenTree(t)
	if err := runIn(migration, manifestPath, false, "0.1.0"); err != nil {
		t.Fatalf("release: %v", err)
	}
	before := readFile(t, migration)
	writeFile(t, source, "create function f() returns int language sql as $$ select 2 $$;\n")
	for _, check := range []bool{false, true} {
		expectProblem(t, runIn(migration, manifestPath, check, ""), "a function source it includes changed")
	}
	expectProblem(t, runIn(migration, manifestPath, false, "0.2.0"), "a function source it includes changed")
	if readFile(t, migration) != before {
		t.Fatal("generate rewrote a released migration")
	}
}

func TestEditedOrMissingReleasedMigrationFailsCheck(t *testing.T) {
	migration, _, manifestPath := frozenTree(t)
	if err := runIn(migration, manifestPath, false, "0.1.0"); err != nil {
		t.Fatalf("release: %v", err)
	}
	writeFile(t, migration, readFile(t, migration)+"-- a late edit\n")
	expectProblem(t, runIn(migration, manifestPath, true, ""), "is released and frozen but its SHA-256")
	if err := os.Remove(migration); err != nil {
		t.Fatal(err)
	}
	expectProblem(t, runIn(migration, manifestPath, true, ""), "released migration 001_v1.sql is missing")
}

func TestManifestRejectsMalformedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "released.sum")
	writeFile(t, path, "not-a-hash  001_v1.sql  0.1.0\n")
	if _, err := readManifest(path); err == nil {
		t.Fatal("a malformed manifest line was accepted")
	}
}

// db/functions keeps only the current version: once f_v1.sql is released
// and replaced by f_v2.sql, the next migration's down section restores v1
// from the released migration that included it, and a check passes.
func TestAnOlderVersionComesFromItsReleasedMigration(t *testing.T) {
	migration, source, manifestPath := frozenTree(t)
	if err := runIn(migration, manifestPath, false, "0.1.0"); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := os.Remove(source); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(filepath.Dir(source), "f_v2.sql"), "create or replace function f() returns int language sql as $$ select 2 $$;\n")
	next := filepath.Join(filepath.Dir(migration), "002_v2.sql")
	writeFile(t, next, "-- migrate:up\n-- include f_v2.sql\n-- end include\n-- migrate:down\n-- include f_v1.sql\n-- end include\n")
	if err := runIn(migration, manifestPath, false, ""); err != nil {
		t.Fatalf("generate: %v", err)
	}
	want := "-- migrate:up\n-- include f_v2.sql\ncreate or replace function f() returns int language sql as $$ select 2 $$;\n-- end include\n" +
		"-- migrate:down\n-- include f_v1.sql\ncreate function f() returns int language sql as $$ select 1 $$;\n-- end include\n"
	if got := readFile(t, next); got != want {
		t.Fatalf("the next migration:\n%s\nwant:\n%s", got, want)
	}
	if err := runIn(migration, manifestPath, false, "0.2.0"); err != nil {
		t.Fatalf("release the next: %v", err)
	}
	if err := runIn(migration, manifestPath, true, ""); err != nil {
		t.Fatalf("check: %v", err)
	}
	writeFile(t, filepath.Join(filepath.Dir(migration), "003_v3.sql"), "-- migrate:up\n-- include f_v0.sql\n-- end include\n")
	expectProblem(t, runIn(migration, manifestPath, false, ""), "f_v0.sql is neither in")
}
