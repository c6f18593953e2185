package usage

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/examples/periodic"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The manual's periodic-runs example is the code of examples/periodic, byte
// for byte (less one level of indentation), and it runs on the wall clock: a
// schedule whose tick is due is taken by the example's Worker, which runs
// the report once.
func TestReadmePeriodicRunsIsTheExampleAndRuns(t *testing.T) {
	t.Parallel()
	manual, err := os.ReadFile(manualFile)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(manual), "## Periodic runs\n")
	_, rest, _ = strings.Cut(rest, "```go\n")
	block, _, closed := strings.Cut(rest, "```\n")
	if !ok || !closed {
		t.Fatal("docs/manual.md has no go block under ## Periodic runs")
	}
	source, err := os.ReadFile("../../examples/periodic/periodic.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, ok := strings.Cut(string(source), "\t// periodic:begin\n")
	region, _, closed = strings.Cut(region, "\t// periodic:end\n")
	if !ok || !closed {
		t.Fatal("examples/periodic/periodic.go has no periodic region")
	}
	var dedented strings.Builder
	for line := range strings.Lines(region) {
		dedented.WriteString(strings.TrimPrefix(line, "\t"))
	}
	if dedented.String() != block {
		t.Fatalf("docs/manual.md's periodic runs differ from examples/periodic:\n--- docs/manual.md\n%s\n--- example\n%s", block, dedented.String())
	}

	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	// The example's schedule, started two days ago so that a tick is due
	// now; the example's own add then finds the name taken and goes on.
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-48 * time.Hour)
	nightly, err := docket.ParseCron("30 2 * * *", berlin)
	if err != nil {
		t.Fatal(err)
	}
	latest := nightly.Next(start)
	for next := nightly.Next(latest); !next.After(time.Now()); next = nightly.Next(next) {
		latest = next
	}
	testkit.ScheduleAdd(t, client, docket.NewSchedule{
		Scope: docket.Tenant("acme"), Name: "nightly-report", GraphID: "send-report", GraphHash: "v1",
		State: json.RawMessage(`{"report": "nightly"}`), Cron: "30 2 * * *", TimeZone: "Europe/Berlin", Start: start,
	})
	want := docket.ScheduleRunID(docket.Tenant("acme"), "nightly-report", latest)
	var calls atomic.Int32
	err = periodic.Run(testkit.Context(t), client, func(_ context.Context, job *docket.Job) error {
		calls.Add(1)
		if job.RunID != want || string(job.State) != `{"report": "nightly"}` {
			t.Errorf("handler got %s %s, want %s", job.RunID, job.State, want)
		}
		return nil
	})
	if err != nil || calls.Load() != 1 {
		t.Fatalf("periodic example: %v after %d handler calls", err, calls.Load())
	}
	run, err := client.FetchRun(testkit.Context(t), docket.Tenant("acme"), want)
	if err != nil || run.Status != docket.StatusDone {
		t.Fatalf("tick run %s: %+v, %v; want done", want, run, err)
	}
	if got := testkit.ScheduleRunIDs(t, pool); len(got) != 1 {
		t.Fatalf("tick runs %v, want the one", got)
	}
}
