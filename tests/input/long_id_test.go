package input

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// hugeID is an id of 102,402 bytes of three-byte characters, so the cut
// after 200 bytes must step back to a character boundary (198 bytes).
var hugeID = strings.Repeat("€", 34134)

// hugeIDEcho is how a message names hugeID: its first 66 characters quoted,
// then its length.
var hugeIDEcho = strconv.Quote(strings.Repeat("€", 66)) + "… (102402 bytes)"

// An over-long id or argument is echoed in an error message cut after 200
// bytes with its full length, never whole; each command is refused with
// its usual exit code and nothing changes.
func TestCLICutsLongArgumentsInMessages(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	databaseURL := pool.Config().ConnString()
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	if _, err := client.InsertRun(testkit.Context(t), newRun("cli-run")); err != nil {
		t.Fatalf("insert: %v", err)
	}
	for _, c := range []struct {
		code   int
		stderr string // the exact message, before the usage text that may follow
		args   []string
	}{
		{testkit.ExitUsage, "docket: unknown command " + hugeIDEcho + " (docket help lists the commands)", []string{hugeID}},
		{testkit.ExitUsage, "docket: help: unknown command " + hugeIDEcho + " (docket help lists the commands)", []string{"help", hugeID}},
		{testkit.ExitUsage, "docket: runs: unknown action " + hugeIDEcho, []string{"runs", hugeID}},
		{testkit.ExitUsage, "docket: migrate: unknown action " + hugeIDEcho, []string{"migrate", hugeID}},
		{testkit.ExitUsage, "docket: runs list: --after " + hugeIDEcho + ": want STARTED_AT/RUN_ID as a page printed it", []string{"runs", "list", "--after", hugeID}},
		{testkit.ExitUsage, "docket: runs list: --status " + hugeIDEcho + " is not one of", []string{"runs", "list", "--status", hugeID}},
		{testkit.ExitUsage, "docket: schedules list: --after " + hugeIDEcho + ": want SCOPE/NAME as a previous page printed", []string{"schedules", "list", "--after", hugeID}},
		{testkit.ExitUsage, "docket: policy set-default: cap must be an integer in 1..2147483647: got " + hugeIDEcho, []string{"policy", "set-default", hugeID}},
		{testkit.ExitUsage, "docket: policy set-rate: invalid rate: period of " + strconv.Quote("5/"+strings.Repeat("€", 66)) + "… (102404 bytes): time: invalid duration " + hugeIDEcho,
			[]string{"policy", "set-rate", "5/" + hugeID}},
		{testkit.ExitUsage, "docket: runs list: invalid value " + hugeIDEcho + " for flag -limit: parse error", []string{"runs", "list", "--limit", hugeID}},
		{testkit.ExitUsage, "docket: schedules add: invalid schedule: name " + hugeIDEcho + ": schedule name is 102402 bytes, over the 200-byte limit",
			[]string{"schedules", "add", "acme", hugeID, "--every", "1m", "--graph", "g", "--graph-hash", "h", "--state", "{}"}},
		{testkit.ExitFailure, "docket: schedules pause: not found: schedule " + hugeIDEcho + " in tenant:acme", []string{"schedules", "pause", "acme", hugeID}},
		{testkit.ExitFailure, "docket: schedules remove: not found: schedule " + hugeIDEcho + " in tenant:acme", []string{"schedules", "remove", "acme", hugeID}},
	} {
		args := append(append([]string{}, c.args...), "--database-url", databaseURL)
		before := testkit.Snap(t, pool)
		r := testkit.CLIRun(t, args...)
		name := strings.Join(c.args[:min(len(c.args), 2)], " ")
		if r.Code != c.code || r.Stdout != "" || !strings.HasPrefix(r.Stderr, c.stderr) {
			t.Errorf("docket %s ...: exit %d, want %d\nstdout: %.300q\nstderr: %.600q\nwant a stderr starting %q", name, r.Code, c.code, r.Stdout, r.Stderr, c.stderr)
		}
		if strings.Contains(r.Stderr, strings.Repeat("€", 67)) {
			t.Errorf("docket %s ...: stderr echoes more than 200 bytes of the argument (%d bytes)", name, len(r.Stderr))
		}
		testkit.ExpectUnchanged(t, name, before, testkit.Snap(t, pool))
	}
}

// The library's typed errors name an over-long id cut the same way, while
// the error's fields keep it whole.
func TestTypedErrorsCutLongIDs(t *testing.T) {
	t.Parallel()
	ctx := testkit.Context(t)
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	before := testkit.Snap(t, pool)
	acme := docket.Tenant("acme")
	for _, c := range []struct {
		what string
		want error
		text string
		err  error
	}{
		{"FetchSchedule", docket.ErrNotFound, "docket: not found: schedule " + hugeIDEcho + " in tenant:acme",
			func() error { _, err := client.FetchSchedule(ctx, acme, hugeID); return err }()},
		{"PauseSchedule", docket.ErrNotFound, "docket: not found: schedule " + hugeIDEcho + " in tenant:acme",
			func() error {
				_, err := client.PauseSchedule(ctx, acme, hugeID, docket.ScheduleWriteOptions{})
				return err
			}()},
		{"AddSchedule", docket.ErrInvalidSchedule, "docket: invalid schedule: name " + hugeIDEcho + ": schedule name is 102402 bytes, over the 200-byte limit",
			func() error {
				_, err := client.AddSchedule(ctx, docket.NewSchedule{Scope: acme, Name: hugeID, Every: time.Minute, GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)})
				return err
			}()},
		{"Register", docket.ErrInvalidConfig, "docket: invalid config: the handler of graph " + hugeIDEcho + " is nil",
			docket.Register[struct{}](docket.NewHandlers(), hugeID, nil)},
	} {
		if !errors.Is(c.err, c.want) || c.err.Error() != c.text {
			t.Errorf("%s: error %.600q, want %q (errors.Is %v)", c.what, c.err, c.text, c.want)
		}
	}
	_, err := client.AddSchedule(ctx, docket.NewSchedule{Scope: acme, Name: hugeID, Every: time.Minute, GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)})
	if refused, ok := errors.AsType[*docket.ScheduleError](err); !ok || refused.Value != hugeID {
		t.Errorf("AddSchedule: %T does not keep the whole name", err)
	}
	testkit.ExpectUnchanged(t, "refused calls with a long id", before, testkit.Snap(t, pool))
}
