// Command sqlinclude copies the function sources of db/functions into the
// migrations of db/schema that include them, so each function body is written
// once, and keeps released migrations frozen: a migration recorded in the
// manifest (db/released-migrations.sum) shipped with a release, a version
// section of CHANGELOG.md, and is never rewritten; its bytes must match the
// recorded SHA-256. Between releases there is at most one open migration,
// the next release's, newer than every released one and edited in place as
// the work needs. db/functions keeps only the current version of each
// function: an include of an older version (the down section of the open
// migration restoring the version before it) takes that body from the
// released migration that included it first.
//
// With -check it changes nothing and fails when a migration is stale, when a
// released migration differs from its recorded sum, when more than one
// migration is open, or when the manifest names a release CHANGELOG.md has
// no section for. With -release VERSION it records the open migration as
// shipped by VERSION, which must have its CHANGELOG.md section.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docketrun/docket-go/db"
)

func main() {
	schemaDir := flag.String("schema", "db/schema", "directory of dbmate migrations")
	functionsDir := flag.String("functions", "db/functions", "directory of function sources")
	manifestPath := flag.String("manifest", "db/released-migrations.sum", "manifest of released migrations")
	changelogPath := flag.String("changelog", "CHANGELOG.md", "the changelog whose version sections are the releases")
	check := flag.Bool("check", false, "fail instead of writing when a migration is stale or a released one changed")
	release := flag.String("release", "", "record the open migration as shipped by this release (x.y.z)")
	flag.Parse()
	if *check && *release != "" {
		fmt.Fprintln(os.Stderr, "sqlinclude: -check and -release exclude each other")
		os.Exit(2)
	}
	paths := treePaths{schema: *schemaDir, functions: *functionsDir, manifest: *manifestPath, changelog: *changelogPath}
	if err := run(paths, *check, *release); err != nil {
		fmt.Fprintln(os.Stderr, "sqlinclude:", err)
		os.Exit(1)
	}
}

// treePaths are the files and directories the generator reads and writes.
type treePaths struct {
	schema, functions, manifest, changelog string
}

func run(paths treePaths, check bool, release string) error {
	schemaDir, functionsDir, manifestPath := paths.schema, paths.functions, paths.manifest
	changelog, err := changelogReleases(paths.changelog)
	if err != nil {
		return err
	}
	if release != "" {
		switch {
		case !releaseVersion.MatchString(release):
			return fmt.Errorf("release %q is not a version x.y.z", release)
		case !slices.Contains(changelog, release):
			return fmt.Errorf("%s has no section \"## [%s] - YYYY-MM-DD\": write the release's changelog first", paths.changelog, release)
		}
	}
	migrations, err := filepath.Glob(filepath.Join(schemaDir, "*.sql"))
	if err != nil {
		return err
	}
	released, err := readManifest(manifestPath)
	if err != nil {
		return err
	}
	if release != "" && slices.Contains(released.releases(), release) {
		return fmt.Errorf("release %s is recorded already: a shipped release never gains a migration", release)
	}
	texts := map[string][]byte{}
	var order []string
	for _, path := range migrations {
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		texts[filepath.Base(path)] = text
		order = append(order, filepath.Base(path))
	}
	var releasedOrder []string
	for _, name := range order {
		if _, ok := released[name]; ok {
			releasedOrder = append(releasedOrder, name)
		}
	}
	// db/functions keeps the current version of each function; an older one
	// is read from the released migration that included it.
	frozen, err := includedBodies(texts, releasedOrder)
	if err != nil {
		return err
	}
	read := func(name string) ([]byte, error) {
		if filepath.Base(name) != name {
			return nil, fmt.Errorf("include names a path, not a file of %s", functionsDir)
		}
		body, err := db.ReadFunctionSource(os.DirFS(functionsDir), name)
		if errors.Is(err, fs.ErrNotExist) {
			if old, ok := frozen[name]; ok {
				return old, nil
			}
			return nil, fmt.Errorf("%s is neither in %s nor included by a released migration", name, functionsDir)
		}
		return body, err
	}
	var problems []string
	var open []string
	recorded := 0
	onDisk := map[string]bool{}
	for _, path := range migrations {
		name := filepath.Base(path)
		onDisk[name] = true
		current := texts[name]
		recordedEntry, isReleased := released[name]
		want := recordedEntry.hash
		expanded, err := expand(current, read)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if isReleased {
			// Frozen: never rewritten, and a source it includes that
			// db/functions still keeps must not change either.
			switch {
			case sum(current) != want:
				problems = append(problems, fmt.Sprintf("%s is released and frozen but its SHA-256 is %s, recorded %s: restore it and put the change in the open migration", path, sum(current), want))
			case !bytes.Equal(current, expanded):
				problems = append(problems, fmt.Sprintf("%s is released and frozen but a function source it includes changed: restore that source and write the change as a new _vN source included by the open migration", path))
			}
			continue
		}
		switch {
		case !bytes.Equal(current, expanded) && check:
			problems = append(problems, fmt.Sprintf("%s is stale: run make generate", path))
		case !bytes.Equal(current, expanded):
			if err := os.WriteFile(path, expanded, 0o644); err != nil {
				return err
			}
			fmt.Printf("updated %s\n", path)
			current = expanded
		}
		if release == "" {
			open = append(open, name)
			continue
		}
		released[name] = entry{hash: sum(current), release: release}
		recorded++
		fmt.Printf("recorded %s as shipped by release %s\n", path, release)
	}
	for name := range released {
		if !onDisk[name] {
			problems = append(problems, fmt.Sprintf("released migration %s is missing from %s", name, schemaDir))
		}
	}
	problems = append(problems, openProblems(open, releasedOrder)...)
	for _, r := range released.releases() {
		if !slices.Contains(changelog, r) {
			problems = append(problems, fmt.Sprintf("%s names release %s, which %s has no section for", manifestPath, r, paths.changelog))
		}
	}
	if release != "" && recorded == 0 {
		fmt.Printf("release %s ships no new migration\n", release)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if recorded > 0 {
		return released.write(manifestPath)
	}
	return nil
}

// openProblems checks the migrations no release recorded: between releases
// there is at most one, the next release's, and it is newer than every
// released migration.
func openProblems(open, released []string) []string {
	var problems []string
	if len(open) > 1 {
		problems = append(problems, fmt.Sprintf("%d open migrations (%s): between releases there is one, the next release's, edited in place",
			len(open), strings.Join(open, ", ")))
	}
	for _, name := range open {
		if len(released) > 0 && name < released[len(released)-1] {
			problems = append(problems, fmt.Sprintf("open migration %s sorts before released %s: the next migration comes after every released one", name, released[len(released)-1]))
		}
	}
	return problems
}
