package usage

import (
	"os"
	"strings"
	"testing"
)

// readmeBlock returns the first fenced block of lang in README.md after the
// first line that starts with anchor, without its fences.
func readmeBlock(t *testing.T, anchor, lang string) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "\n"+anchor)
	_, rest, found := strings.Cut(rest, "```"+lang+"\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !found || !closed {
		t.Fatalf("README.md has no %s block after %q", lang, anchor)
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

// requireReadmeIsRegion fails t unless the README's go block after anchor
// is file's region name, byte for byte.
func requireReadmeIsRegion(t *testing.T, anchor, file, name string) {
	t.Helper()
	block, region := readmeBlock(t, anchor, "go"), exampleRegion(t, file, name)
	if block != region {
		t.Fatalf("README block after %q differs from the %s region of %s:\n--- README\n%s\n--- example\n%s", anchor, name, file, block, region)
	}
}
