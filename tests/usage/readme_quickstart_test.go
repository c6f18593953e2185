package usage

import (
	"context"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docketrun/docket-go/examples/quickstart"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The README's quick start is the code of examples/quickstart, byte for
// byte (less one level of indentation), and it runs: on a database whose
// search_path is the app's own, it migrates, enqueues a typed state with the
// app's own write, and the Worker's registered handler gets it decoded and
// completes the run.
func TestReadmeQuickStartIsTheExampleAndRuns(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "## Quick start\n\n```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !closed {
		t.Fatal("README.md has no go block under ## Quick start")
	}
	source, err := os.ReadFile("../../examples/quickstart/quickstart.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(source), "\t// quickstart:begin\n")
	region, _, closed = strings.Cut(region, "\t// quickstart:end\n")
	if !ok || !closed {
		t.Fatal("examples/quickstart/quickstart.go has no quickstart region")
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if dedented.String() != block {
		t.Fatalf("README quick start differs from examples/quickstart:\n--- README\n%s\n--- example\n%s", block, dedented.String())
	}

	databaseURL := testkit.MigrationURLWithSearchPath(t, pgtest.NewEmptyDatabase(t), "app")
	app := testkit.PoolFor(t, databaseURL)
	testkit.ExecSQL(t, app, `create schema app; create table app.invoices (id bigint primary key)`)
	var calls atomic.Int32
	err = quickstart.Run(testkit.Context(t), databaseURL, func(_ context.Context, invoiceID int) error {
		calls.Add(1)
		if invoiceID != 42 {
			t.Errorf("handler got invoice %d, want 42", invoiceID)
		}
		return nil
	})
	if err != nil || calls.Load() != 1 {
		t.Fatalf("quick start: %v after %d handler calls", err, calls.Load())
	}
	var status, graph, state string
	if err := app.QueryRow(testkit.Context(t), `select status, graph_id, state::text from docket.docket_runs where run_id = 'invoice-42'`).
		Scan(&status, &graph, &state); err != nil || status != "done" || graph != "send-invoice" || state != `{"invoice": 42}` {
		t.Fatalf("invoice-42 is %q of graph %q with %s (%v), want done, send-invoice, {\"invoice\": 42}", status, graph, state, err)
	}
	if got := testkit.QueryInt64(t, app, `select count(*) from invoices`); got != 1 {
		t.Fatalf("%d invoices, want the app's one", got)
	}
}
