package worker

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Helpers of the retry-policy tests.

// attempts records the Job.Attempt of every handler call, per run.
type attempts struct {
	mu   sync.Mutex
	seen map[string][]int
}

func newRPAttempts() *attempts { return &attempts{seen: map[string][]int{}} }

// add records job's attempt and returns how many calls the run had so far.
func (a *attempts) add(job *docket.Job) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen[job.RunID] = append(a.seen[job.RunID], job.Attempt)
	return len(a.seen[job.RunID])
}

// expect fails unless runID's handler calls saw exactly want.
func (a *attempts) expect(t *testing.T, runID string, want ...int) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	if got := a.seen[runID]; !slices.Equal(got, want) {
		t.Fatalf("%s: handler calls saw Job.Attempt %v, want %v", runID, got, want)
	}
}

// waitWritten waits until n verdicts named verdict were written for runID.
func waitWritten(t *testing.T, events *testkit.WorkerEvents, runID, verdict string, n int) {
	t.Helper()
	events.WaitFor(t, fmt.Sprintf("%d %s verdicts of %s written", n, verdict, runID), func(evs []docket.WorkerEvent) bool {
		return testkit.WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventVerdict && ev.RunID == runID && ev.Verdict == verdict && ev.Outcome == docket.VerdictWritten
		}) >= n
	})
}

// fixed is a jitter source that always draws r.
func fixed(r float64) func() float64 { return func() float64 { return r } }
