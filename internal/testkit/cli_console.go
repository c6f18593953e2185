package testkit

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/internal/cli"
)

// ConsoleCLI runs "docket console" in-process until stop is called and
// returns the URL it printed; wait returns its exit code and the rest of
// its output.
func ConsoleCLI(t *testing.T, args ...string) (baseURL string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(Context(t))
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		code := cli.Run(ctx, append([]string{"console"}, args...), pw, &stderr)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		cancel()
		t.Fatalf("docket console printed nothing (exit %d); stderr:\n%s", <-done, stderr.String())
	}
	m := regexp.MustCompile(`^docket console \((read-only|writes enabled)\) listening on (http://127\.0\.0\.1:[0-9]+/)$`).FindStringSubmatch(lines.Text())
	if m == nil {
		cancel()
		t.Fatalf("first line %q", lines.Text())
	}
	return m[2], func() (int, string) {
		cancel()
		var rest []string
		for lines.Scan() {
			rest = append(rest, lines.Text())
		}
		return <-done, strings.Join(rest, "\n")
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
