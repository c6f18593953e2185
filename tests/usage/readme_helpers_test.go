package usage

import (
	"os"
	"strings"
	"testing"
)

// The documents whose code blocks the tests keep equal to the examples: the
// README holds the quick start, the manual every other section's example.
const (
	readmeFile = "../../README.md"
	manualFile = "../../docs/manual.md"
)

// docBlock returns the first fenced block of lang in the document doc after
// the first line that starts with anchor, without its fences.
func docBlock(t *testing.T, doc, anchor, lang string) string {
	t.Helper()
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(text), "\n"+anchor)
	_, rest, found := strings.Cut(rest, "```"+lang+"\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatalf("%s has no %s block after %q", doc, lang, anchor)
	}
	return block
}

// exampleRegion returns the lines of file between the "// name:begin" and
// "// name:end" markers, less the markers' own indentation and less the
// blank line gofmt puts before an end marker that follows a declaration.
func exampleRegion(t *testing.T, file, name string) string {
	t.Helper()
	source, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(source), "// "+name+":begin\n")
	indent := before[strings.LastIndexByte(before, '\n')+1:]
	region, _, closed := strings.Cut(rest, indent+"// "+name+":end\n")
	if !ok || !closed || strings.Trim(indent, "\t") != "" {
		t.Fatalf("%s has no %s region", file, name)
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, indent))
	}
	return strings.TrimRight(dedented.String(), "\n") + "\n"
}

// requireDocIsRegion fails t unless the go block of doc after anchor is
// file's region name, byte for byte.
func requireDocIsRegion(t *testing.T, doc, anchor, file, name string) {
	t.Helper()
	block, region := docBlock(t, doc, anchor, "go"), exampleRegion(t, file, name)
	if block != region {
		t.Fatalf("%s block after %q differs from the %s region of %s:\n--- %s\n%s\n--- example\n%s", doc, anchor, name, file, doc, block, region)
	}
}
