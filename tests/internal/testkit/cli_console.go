package testkit

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// ConsoleCLI runs "docket console" until stop is called and returns the
// URL it printed; stop interrupts it as Ctrl-C does and returns its exit
// code and the rest of its output.
func ConsoleCLI(t *testing.T, args ...string) (baseURL string, stop func() (int, string)) {
	t.Helper()
	p := CLIStart(t, append([]string{"console"}, args...)...)
	lines := bufio.NewScanner(p.Stdout)
	if !lines.Scan() {
		p.Interrupt()
		code, stderr := p.Wait()
		t.Fatalf("docket console printed nothing (exit %d); stderr:\n%s", code, stderr)
	}
	m := regexp.MustCompile(`^docket console \((read-only|writes enabled)\) listening on (http://127\.0\.0\.1:[0-9]+/)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		p.Interrupt()
		t.Fatalf("first line %q", lines.Text())
	}
	return m[2], func() (int, string) {
		p.Interrupt()
		var rest []string
		for lines.Scan() {
			rest = append(rest, lines.Text())
		}
		code, _ := p.Wait()
		return code, strings.Join(rest, "\n")
	}
}

// ConsoleCLIGet fetches a page of a console the CLI serves.
func ConsoleCLIGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
