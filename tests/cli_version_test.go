package tests

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/cli"
)

// docket version prints the build's version and the schema version the
// binary installs, on stdout only, and an unknown command is one line that
// points at the help instead of the whole usage.
func TestCLIVersionAndUnknownCommand(t *testing.T) {
	t.Parallel()
	schema, err := docket.SchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	r := cliExpect(t, cli.ExitOK, "", "version")
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if r.stderr != "" || len(lines) < 3 || !strings.HasPrefix(lines[0], "docket ") ||
		!strings.Contains(r.stdout, "\nschema "+schema+"\n") || !strings.HasPrefix(lines[len(lines)-1], "go go1.") {
		t.Fatalf("version printed\nstdout: %q\nstderr: %q", r.stdout, r.stderr)
	}
	cliExpect(t, cli.ExitUsage, "version: unexpected argument", "version", "extra")
	cliExpect(t, cli.ExitOK, "docket version", "version", "--help")
	unknown := cliExpect(t, cli.ExitUsage, "", "frobnicate")
	if unknown.stdout != "" || unknown.stderr != "docket: unknown command \"frobnicate\" (docket help lists the commands)\n" {
		t.Fatalf("unknown command printed\nstdout: %q\nstderr: %q", unknown.stdout, unknown.stderr)
	}
}
