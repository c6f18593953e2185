// Command sqlinclude copies the function sources of db/functions into the
// migrations of db/schema that include them, so each function body is written
// once, and keeps released migrations frozen: a migration recorded in the
// manifest is never rewritten, and its bytes must match the recorded SHA-256.
// db/functions keeps only the current version of each function: an include
// of an older version (the down section of a new migration restoring the
// version before it) takes that body from the released migration that
// included it first.
//
// With -check it changes nothing and fails when a migration is stale, when a
// released migration differs from its recorded sum, or when a migration is
// not recorded at all. With -release it records the migrations not yet in
// the manifest (after expanding them), and never rewrites a recorded one.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/docketrun/docket-go/db"
)

func main() {
	schemaDir := flag.String("schema", "db/schema", "directory of dbmate migrations")
	functionsDir := flag.String("functions", "db/functions", "directory of function sources")
	manifestPath := flag.String("manifest", "db/released-migrations.sum", "manifest of released migrations")
	check := flag.Bool("check", false, "fail instead of writing when a migration is stale or unrecorded")
	release := flag.Bool("release", false, "record every migration not yet in the manifest as released")
	flag.Parse()
	if *check && *release {
		fmt.Fprintln(os.Stderr, "sqlinclude: -check and -release exclude each other")
		os.Exit(2)
	}
	if err := run(*schemaDir, *functionsDir, *manifestPath, *check, *release); err != nil {
		fmt.Fprintln(os.Stderr, "sqlinclude:", err)
		os.Exit(1)
	}
}

func run(schemaDir, functionsDir, manifestPath string, check, release bool) error {
	migrations, err := filepath.Glob(filepath.Join(schemaDir, "*.sql"))
	if err != nil {
		return err
	}
	released, err := readManifest(manifestPath)
	if err != nil {
		return err
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
	recorded := 0
	onDisk := map[string]bool{}
	for _, path := range migrations {
		name := filepath.Base(path)
		onDisk[name] = true
		current := texts[name]
		want, isReleased := released[name]
		expanded, err := expand(current, read)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if isReleased {
			// Frozen: never rewritten, and a source it includes that
			// db/functions still keeps must not change either.
			switch {
			case sum(current) != want:
				problems = append(problems, fmt.Sprintf("%s is released and frozen but its SHA-256 is %s, recorded %s: restore it and put the change in a new migration", path, sum(current), want))
			case !bytes.Equal(current, expanded):
				problems = append(problems, fmt.Sprintf("%s is released and frozen but a function source it includes changed: restore that source and write the change as a new _vN file included by a new migration", path))
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
		switch {
		case release:
			released[name] = sum(current)
			recorded++
			fmt.Printf("recorded %s as released\n", path)
		case check:
			problems = append(problems, fmt.Sprintf("%s is not recorded in %s: run make release-migration once it is final", path, manifestPath))
		}
	}
	for name := range released {
		if !onDisk[name] {
			problems = append(problems, fmt.Sprintf("released migration %s is missing from %s", name, schemaDir))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if recorded > 0 {
		return released.write(manifestPath)
	}
	return nil
}
