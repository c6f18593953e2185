package admin

import (
	"regexp"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The phases `docket runs list --help` names are exactly docket.RunPhases,
// in its order, so the help cannot drift from the one definition.
func TestCLIRunsListHelpNamesEveryPhase(t *testing.T) {
	t.Parallel()
	help := testkit.CLIExpect(t, testkit.ExitOK, "", "runs", "list", "--help").Stdout
	m := regexp.MustCompile(`(?s)--phase P\s+only runs in phase P at the database clock: (.*?)\n  --graph`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("runs list --help names no phases:\n%s", help)
	}
	listed := strings.Fields(strings.NewReplacer(",", " ", " or ", " ").Replace(m[1]))
	phases := docket.RunPhases()
	if len(listed) != len(phases) {
		t.Fatalf("the help names %q, want %q", listed, phases)
	}
	for i, p := range phases {
		if listed[i] != string(p) {
			t.Fatalf("the help names %q, want %q", listed, phases)
		}
	}
}
