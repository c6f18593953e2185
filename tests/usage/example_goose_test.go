package usage

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// docsBlock returns the first fenced block of lang in docs/NAME after the
// first line that starts with anchor, without its fences.
func docsBlock(t *testing.T, name, anchor, lang string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n"+anchor)
	_, rest, found := strings.Cut(rest, "```"+lang+"\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatalf("docs/%s has no %s block after %q", name, lang, anchor)
	}
	return block
}

// examples/goose, a module of its own (goose stays out of Docket's
// go.mod), applies Docket's goose-format files with goose itself
// (github.com/pressly/goose/v3) into schema docket, with goose's table
// there too and nothing in the app's public schema; opens a client with
// Config.Schema "docket" on the app's pool (search_path untouched) and
// works a run; then adopts the schema into Docket's ledger, after which
// `docket migrate up` has nothing to do. docs/embedding.md shows its goose
// and adopt regions byte for byte.
func TestExampleGooseAppliesDocketIntoItsOwnSchema(t *testing.T) {
	t.Parallel()
	for _, region := range []struct{ anchor, name string }{
		{"With goose from Go", "goose"},
		{"Adopting from Go", "goose:adopt"},
	} {
		if block, code := docsBlock(t, "embedding.md", region.anchor, "go"), exampleRegion(t, "../../examples/goose/main.go", region.name); block != code {
			t.Fatalf("docs/embedding.md block after %q differs from the %s region of examples/goose:\n--- docs\n%s\n--- example\n%s", region.anchor, region.name, block, code)
		}
	}

	databaseURL := pgtest.NewEmptyDatabase(t)
	cmd := exec.CommandContext(testkit.Context(t), "go", "run", ".", "-database-url", databaseURL, "-adopt")
	cmd.Dir = "../../examples/goose"
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go run examples/goose: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var want strings.Builder
	for _, name := range testkit.MigrationNames {
		want.WriteString("goose: applied " + name + "\n")
	}
	want.WriteString("run invoice-42 is done: {\"sent\": true}\n")
	want.WriteString("schema docket has the shape of " + testkit.MigrationNewestLabel + ", applied outside Docket's ledger: recording it in docket_schema_migrations\n")
	for _, name := range testkit.MigrationNames {
		want.WriteString("recorded " + name + " in schema docket\n")
	}
	want.WriteString("schema docket is up to date at " + testkit.MigrationNewest + ": nothing to apply\n")
	if stdout.String() != want.String() {
		t.Fatalf("examples/goose printed\n%s\nwant\n%s", stdout.String(), want.String())
	}

	pool := testkit.PoolFor(t, databaseURL)
	var goose string
	if err := pool.QueryRow(testkit.Context(t), `select string_agg(version_id::text, ',' order by id) from docket.goose_db_version where is_applied`).Scan(&goose); err != nil {
		t.Fatal(err)
	}
	if goose != "0,"+strings.Join(testkit.MigrationAllVersions, ",") {
		t.Fatalf("goose recorded %s", goose)
	}
	testkit.MigrationExpectApplied(t, databaseURL, testkit.MigrateCall{Schema: "docket"}, testkit.MigrationAllVersions...)
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket.docket_runs where run_id = 'invoice-42' and status = 'done'`); got != 1 {
		t.Fatalf("%d done runs invoice-42 in schema docket, want 1", got)
	}
}
