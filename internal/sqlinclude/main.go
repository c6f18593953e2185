// Command sqlinclude copies the function sources of db/functions into the
// migrations of db/schema that include them, so each function body is written
// once. With -check it changes nothing and fails when a migration is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	schemaDir := flag.String("schema", "db/schema", "directory of dbmate migrations")
	functionsDir := flag.String("functions", "db/functions", "directory of function sources")
	check := flag.Bool("check", false, "fail instead of writing when a migration is stale")
	flag.Parse()
	if err := run(*schemaDir, *functionsDir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "sqlinclude:", err)
		os.Exit(1)
	}
}

func run(schemaDir, functionsDir string, check bool) error {
	migrations, err := filepath.Glob(filepath.Join(schemaDir, "*.sql"))
	if err != nil {
		return err
	}
	read := func(name string) ([]byte, error) {
		if filepath.Base(name) != name {
			return nil, fmt.Errorf("include names a path, not a file of %s", functionsDir)
		}
		return os.ReadFile(filepath.Join(functionsDir, name))
	}
	stale := 0
	for _, path := range migrations {
		current, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		expanded, err := expand(current, read)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if bytes.Equal(current, expanded) {
			continue
		}
		if check {
			fmt.Fprintf(os.Stderr, "%s is stale: run make generate\n", path)
			stale++
			continue
		}
		if err := os.WriteFile(path, expanded, 0o644); err != nil {
			return err
		}
		fmt.Printf("updated %s\n", path)
	}
	if stale > 0 {
		return fmt.Errorf("%d migration(s) differ from db/functions", stale)
	}
	return nil
}
