package usage

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// markdownLink matches an inline link or image: its target is the first
// group, less an optional title.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Every relative link of the README and of the documents in docs/ names a
// file of the repository, and every fragment of a link to a Markdown file
// names one of that file's headings as GitHub anchors them. Links with a
// scheme (https:, mailto:) are not followed.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append([]string{readmeFile}, docs...)
	anchors := map[string][]string{}
	anchorsOf := func(file string) []string {
		if a, ok := anchors[file]; ok {
			return a
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		anchors[file] = headingAnchors(string(text))
		return anchors[file]
	}
	var broken []string
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(doc, "../../")
		for n, line := range proseLines(string(text)) {
			for _, m := range markdownLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, ":") {
					continue
				}
				path, fragment, _ := strings.Cut(target, "#")
				file := doc
				if path != "" {
					file = filepath.Join(filepath.Dir(doc), path)
				}
				where := name + ":" + strconv.Itoa(n+1) + ": " + target
				if _, err := os.Stat(file); err != nil {
					broken = append(broken, where+": no such file")
					continue
				}
				if fragment != "" && strings.HasSuffix(file, ".md") && !slices.Contains(anchorsOf(file), fragment) {
					broken = append(broken, where+": no such heading")
				}
			}
		}
	}
	if len(broken) > 0 {
		t.Fatalf("%d broken links:\n%s", len(broken), strings.Join(broken, "\n"))
	}
}

// proseLines returns the lines of a Markdown text with the lines of its
// fenced code blocks blanked, so that line numbers stay those of the file.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, punctuation but hyphens and underscores dropped, spaces
// made hyphens, and "-1", "-2", ... after repeats.
func headingAnchors(text string) []string {
	var anchors []string
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		heading := strings.TrimLeft(line, "#")
		if heading == line || !strings.HasPrefix(heading, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				slug.WriteRune(r)
			}
		}
		anchor := slug.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor] = n + 1
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		anchors = append(anchors, anchor)
	}
	return anchors
}
