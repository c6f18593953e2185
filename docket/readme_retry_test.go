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
	manual, err := os.ReadFile("../docs/manual.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(manual), "### Retries and errors\n")
	_, rest, found := strings.Cut(rest, "```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatal("docs/manual.md has no go block under ### Retries and errors")
	}
	source, err := os.ReadFile("example_retry_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(source), "\t// retry:begin\n")
	region, _, closed = strings.Cut(region, "\t// retry:end\n")
	if !ok || !closed {
		t.Fatal("example_retry_test.go has no retry region")
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if dedented.String() != block {
		t.Fatalf("docs/manual.md's retry example differs from ExampleRetryPolicy:\n--- docs/manual.md\n%s\n--- example\n%s", block, dedented.String())
	}
}
