package usage

import (
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/examples/queues"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The manual's queues example is the code of examples/queues, byte for byte
// (less one level of indentation), and it runs: two queues on one pool, one
// run each, each handled by its own queue's Worker only.
func TestReadmeQueuesIsTheExampleAndRuns(t *testing.T) {
	t.Parallel()
	manual, err := os.ReadFile(manualFile)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(manual), "## Queues\n")
	_, rest, _ = strings.Cut(rest, "```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !closed {
		t.Fatal("docs/manual.md has no go block under ## Queues")
	}
	source, err := os.ReadFile("../../examples/queues/queues.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(source), "\t// queues:begin\n")
	region, _, closed = strings.Cut(region, "\t// queues:end\n")
	if !ok || !closed {
		t.Fatal("examples/queues/queues.go has no queues region")
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if dedented.String() != block {
		t.Fatalf("docs/manual.md's queues differ from examples/queues:\n--- docs/manual.md\n%s\n--- example\n%s", block, dedented.String())
	}

	pool := testkit.PoolFor(t, pgtest.NewEmptyDatabase(t))
	seen, err := queues.Run(testkit.Context(t), pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("queues.Run: %v", err)
	}
	if want := map[string][]string{"email": {"welcome-acme"}, "reports": {"monthly-acme"}}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("the queues handled %v, want %v", seen, want)
	}
}
