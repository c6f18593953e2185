package docket

import (
	"os"
	"strings"
	"testing"
)

// The README's retry example is the code of ExampleRetryPolicy, byte for
// byte less one level of indentation, so it compiles.
func TestReadmeRetryExampleIsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "### Retries and errors\n")
	_, rest, found := strings.Cut(rest, "```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatal("README.md has no go block under ### Retries and errors")
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
		t.Fatalf("README retry example differs from ExampleRetryPolicy:\n--- README\n%s\n--- example\n%s", block, dedented.String())
	}
}
