package usage

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/examples/embedding"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The manual's embedding example is the region of examples/embedding, byte
// for byte (less one level of indentation), and it runs: the generated read
// and the facade's insert share one transaction, so the tenant's backlog
// limit holds, and a refused call leaves no run.
func TestReadmeEmbeddingIsTheExampleAndRuns(t *testing.T) {
	t.Parallel()
	manual, err := os.ReadFile(manualFile)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(manual), "\n## Embedding\n")
	_, rest, found := strings.Cut(section, "```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatal("docs/manual.md has no go block under ## Embedding")
	}
	source, err := os.ReadFile("../../examples/embedding/embedding.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(source), "\t// embedding:begin\n")
	region, _, closed = strings.Cut(region, "\t// embedding:end\n")
	if !ok || !closed {
		t.Fatal("examples/embedding/embedding.go has no embedding region")
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if dedented.String() != block {
		t.Fatalf("docs/manual.md's embedding example differs from examples/embedding:\n--- docs/manual.md\n%s\n--- example\n%s", block, dedented.String())
	}

	// The documented layout: the app's pool resolves only its own schemas,
	// Docket lives in schema docket.
	pool := testkit.PoolFor(t, testkit.MigrationURLWithSearchPath(t, pgtest.NewEmptyDatabase(t), "app,public"))
	testkit.ExecSQL(t, pool, `create schema app`)
	if err := testkit.PoolMigrator(t, pool, docket.MigratorConfig{Schema: "docket"}).Migrate(testkit.Context(t), docket.MigrateUp, docket.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg := testkit.TenantFairConfig(4)
	cfg.Schema = "docket"
	client := testkit.OpenClient(t, pool, cfg)
	ctx := testkit.Context(t)
	for invoice := range 2 {
		if err := embedding.Enqueue(ctx, pool, client, "acme", invoice, 2); err != nil {
			t.Fatalf("enqueue invoice %d: %v", invoice, err)
		}
	}
	if err := embedding.Enqueue(ctx, pool, client, "acme", 2, 2); !errors.Is(err, embedding.ErrBacklogFull) {
		t.Fatalf("third enqueue: %v, want ErrBacklogFull", err)
	}
	if err := embedding.Enqueue(ctx, pool, client, "globex", 3, 2); err != nil {
		t.Fatalf("enqueue for another tenant: %v", err)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket.docket_runs where tenant_id = 'acme'`); got != 2 {
		t.Fatalf("acme has %d runs, want 2: the refused call must leave none", got)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket.docket_runs where tenant_id = 'globex'`); got != 1 {
		t.Fatalf("globex has %d runs, want 1", got)
	}
}
