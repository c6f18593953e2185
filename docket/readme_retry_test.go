package docket

import (
	"os"
	"strings"
	"testing"
)

// The manual's retry example (docs/manual.md, "Retries and errors") is the
// code of ExampleRetryPolicy, byte for byte less one level of indentation,
// so it compiles.
func TestReadmeRetryExampleIsTheExample(t *testing.T) {
	requireManualBlockIsRegion(t, "### Retries and errors\n", "example_retry_test.go", "retry")
}

// The manual's middleware example (docs/manual.md, "Middleware") is the
// code of ExampleMiddleware.
func TestReadmeMiddlewareExampleIsTheExample(t *testing.T) {
	requireManualBlockIsRegion(t, "### Middleware\n", "example_middleware_test.go", "middleware")
}

// requireManualBlockIsRegion fails t unless the first go block of
// docs/manual.md after heading is the region name of file, byte for byte
// less one level of indentation.
func requireManualBlockIsRegion(t *testing.T, heading, file, name string) {
	t.Helper()
	manual, err := os.ReadFile("../docs/manual.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(manual), heading)
	_, rest, found := strings.Cut(rest, "```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatalf("docs/manual.md has no go block under %q", heading)
	}
	source, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(source), "\t// "+name+":begin\n")
	region, _, closed = strings.Cut(region, "\t// "+name+":end\n")
	if !ok || !closed {
		t.Fatalf("%s has no %s region", file, name)
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if dedented.String() != block {
		t.Fatalf("docs/manual.md's %s example differs from %s:\n--- docs/manual.md\n%s\n--- example\n%s", name, file, block, dedented.String())
	}
}
