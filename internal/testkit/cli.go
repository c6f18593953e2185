package testkit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/internal/cli"
)

// CLIResult is one in-process run of the docket command.
type CLIResult struct {
	Code   int
	Stdout string
	Stderr string
}

// CLIRun runs the docket command line in-process.
func CLIRun(t testing.TB, args ...string) CLIResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Run(Context(t), args, &stdout, &stderr)
	return CLIResult{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// CLIExpect runs args and requires the exit code and, when set, a fragment
// of stdout or stderr.
func CLIExpect(t testing.TB, code int, fragment string, args ...string) CLIResult {
	t.Helper()
	r := CLIRun(t, args...)
	if r.Code != code {
		t.Fatalf("docket %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.Code, code, r.Stdout, r.Stderr)
	}
	if fragment != "" && !strings.Contains(r.Stdout+r.Stderr, fragment) {
		t.Fatalf("docket %s: output lacks %q\nstdout: %s\nstderr: %s", strings.Join(args, " "), fragment, r.Stdout, r.Stderr)
	}
	return r
}
