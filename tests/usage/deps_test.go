package usage

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// What an app links when it imports docket: PostgreSQL's driver, the
// metrics and tracing APIs, dbmate's migration-file parser and their own dependencies,
// and nothing else (no other database driver, no container or test code).
func TestDocketLinksOnlyWhatPostgreSQLNeeds(t *testing.T) {
	t.Parallel()
	out, err := exec.CommandContext(testkit.Context(t), "go", "list", "-deps",
		"-f", "{{if not .Standard}}{{with .Module}}{{.Path}}{{end}}{{end}}",
		"github.com/docketrun/docket-go/docket").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var modules []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(modules, m) {
			modules = append(modules, m)
		}
	}
	slices.Sort(modules)
	want := []string{
		"github.com/amacneil/dbmate/v2",
		"github.com/cespare/xxhash/v2",
		"github.com/docketrun/docket-go",
		"github.com/google/uuid",
		"github.com/jackc/pgpassfile",
		"github.com/jackc/pgservicefile",
		"github.com/jackc/pgx/v5",
		"github.com/jackc/puddle/v2",
		"go.opentelemetry.io/otel",
		"go.opentelemetry.io/otel/metric",
		"go.opentelemetry.io/otel/trace",
		"golang.org/x/sync",
		"golang.org/x/text",
	}
	if !slices.Equal(modules, want) {
		t.Fatalf("importing docket links modules\n%v\nwant\n%v", modules, want)
	}
	pkgs, err := exec.CommandContext(testkit.Context(t), "go", "list", "-deps", "github.com/docketrun/docket-go/docket").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(pkgs)) {
		if strings.Contains(p, "/driver/") || strings.Contains(p, "lib/pq") {
			t.Errorf("importing docket links the database driver package %s", p)
		}
	}
}

// The library's module graph holds none of the tests' dependencies: they
// live in the tests module, so an app that requires Docket does not get
// them in its own go.sum.
func TestLibraryModuleLeavesOutTheTestsDependencies(t *testing.T) {
	t.Parallel()
	cmd := exec.CommandContext(testkit.Context(t), "go", "list", "-m", "all")
	cmd.Dir = testkit.ModuleRoot(t)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, _, _ := strings.Cut(line, " ")
		for _, testOnly := range []string{"github.com/testcontainers/", "github.com/chromedp/", "pgregory.net/rapid", "go.opentelemetry.io/otel/sdk"} {
			if strings.HasPrefix(path, testOnly) {
				t.Errorf("the library's module graph holds %s", line)
			}
		}
	}
}
