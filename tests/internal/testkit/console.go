package testkit

import (
	"html"
	"regexp"
	"strings"
	"testing"
)

// Patterns that take the console's HTML apart: a table row, a cell, any tag,
// a run of white space.
var (
	ConsoleRowRe  = regexp.MustCompile(`(?s)<tr[^>]*>(.*?)</tr>`)
	ConsoleCellRe = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
	ConsoleTagRe  = regexp.MustCompile(`(?s)<[^>]*>`)
	ConsoleWSRe   = regexp.MustCompile(`\s+`)
)

// ConsoleText is an HTML fragment's text: tags dropped, entities decoded,
// white space collapsed.
func ConsoleText(fragment string) string {
	return strings.TrimSpace(ConsoleWSRe.ReplaceAllString(html.UnescapeString(ConsoleTagRe.ReplaceAllString(fragment, "")), " "))
}

// ConsoleTable returns the body rows of the table with id as cell texts
// joined by " | ".
func ConsoleTable(t testing.TB, body, id string) []string {
	t.Helper()
	start := strings.Index(body, `<table class="grid" id="`+id+`"`)
	if start < 0 {
		start = strings.Index(body, `id="`+id+`"`)
	}
	if start < 0 {
		t.Fatalf("no table %q in:\n%s", id, body)
	}
	rest := body[start:]
	end := strings.Index(rest, "</table>")
	rest = rest[:end]
	if tb := strings.Index(rest, "<tbody>"); tb >= 0 {
		rest = rest[tb:]
	}
	var rows []string
	for _, m := range ConsoleRowRe.FindAllStringSubmatch(rest, -1) {
		var cells []string
		for _, c := range ConsoleCellRe.FindAllStringSubmatch(m[1], -1) {
			cells = append(cells, ConsoleText(c[1]))
		}
		if cells != nil {
			rows = append(rows, strings.Join(cells, " | "))
		}
	}
	return rows
}

// ConsoleFacts returns the text of the element with id.
func ConsoleFacts(t testing.TB, body, id string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)id="` + regexp.QuoteMeta(id) + `"[^>]*>(.*?)</`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no element %q in:\n%s", id, body)
	}
	return ConsoleText(m[1])
}

// ExpectRows compares table rows exactly.
func ExpectRows(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s rows:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
