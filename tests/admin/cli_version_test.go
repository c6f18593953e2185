package admin

import (
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// docket version prints the release and the schema version the
// binary installs, on stdout only, and an unknown command is one line that
// points at the help instead of the whole usage.
func TestCLIVersionAndUnknownCommand(t *testing.T) {
	t.Parallel()
	schema, err := docket.SchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	r := testkit.CLIExpect(t, testkit.ExitOK, "", "version")
	lines := strings.Split(strings.TrimSuffix(r.Stdout, "\n"), "\n")
	if r.Stderr != "" || len(lines) < 3 || lines[0] != "docket "+docket.Version ||
		!strings.Contains(r.Stdout, "\nschema "+schema+"\n") || !strings.HasPrefix(lines[len(lines)-1], "go go1.") {
		t.Fatalf("version printed\nstdout: %q\nstderr: %q", r.Stdout, r.Stderr)
	}
	testkit.CLIExpect(t, testkit.ExitUsage, "version: unexpected argument", "version", "extra")
	testkit.CLIExpect(t, testkit.ExitOK, "docket version", "version", "--help")
	unknown := testkit.CLIExpect(t, testkit.ExitUsage, "", "frobnicate")
	if unknown.Stdout != "" || unknown.Stderr != "docket: unknown command \"frobnicate\" (docket help lists the commands)\n" {
		t.Fatalf("unknown command printed\nstdout: %q\nstderr: %q", unknown.Stdout, unknown.Stderr)
	}
}
