package testkit

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// WorkerEvents records what workers report through WorkerConfig.OnEvent and
// lets a test wait until the record satisfies a predicate. Waiting is
// driven by the events themselves: the predicate is checked again each time
// one arrives, never on a timer.
type WorkerEvents struct {
	mu     sync.Mutex
	events []docket.WorkerEvent
	// changed is closed, and replaced, when an event arrives.
	changed chan struct{}
}

// NewWorkerEvents returns an empty WorkerEvents.
func NewWorkerEvents() *WorkerEvents { return &WorkerEvents{changed: make(chan struct{})} }

// hook is the OnEvent of the recorded workers; several may share it.
func (e *WorkerEvents) Hook(ev docket.WorkerEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
	close(e.changed)
	e.changed = make(chan struct{})
}

// all returns every event so far.
func (e *WorkerEvents) All() []docket.WorkerEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]docket.WorkerEvent(nil), e.events...)
}

// waitFor waits until cond holds for the events so far, failing the test
// after WorkerDeadline, which only bounds a hang. cond runs outside the lock,
// on a prefix of the record that appends never touch, so it may take its
// time (say, read a committed fact from the database that the next event
// follows) without blocking the hook.
func (e *WorkerEvents) WaitFor(t *testing.T, what string, cond func([]docket.WorkerEvent) bool) {
	t.Helper()
	timeout := time.NewTimer(WorkerDeadline)
	defer timeout.Stop()
	for {
		e.mu.Lock()
		events, changed := e.events[:len(e.events):len(e.events)], e.changed
		e.mu.Unlock()
		if cond(events) {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("timed out waiting for %s; events: %v", what, WorkerDescribe(e.All()))
		}
	}
}

// waitWritten waits until a verdict of kind verdict was written for each of
// runIDs.
func (e *WorkerEvents) WaitWritten(t *testing.T, verdict string, runIDs ...string) {
	t.Helper()
	e.WaitFor(t, fmt.Sprintf("the %s verdicts of %v written", verdict, runIDs), func(events []docket.WorkerEvent) bool {
		return WorkerAllWritten(events, verdict, runIDs)
	})
}

// waitVerdicts waits until, for each run of want, a verdict of the kind
// want names was written.
func (e *WorkerEvents) WaitVerdicts(t *testing.T, want map[string]string) {
	t.Helper()
	e.WaitFor(t, fmt.Sprintf("the verdicts %v written", want), func(events []docket.WorkerEvent) bool {
		for id, verdict := range want {
			if !WorkerWritten(events, id, verdict) {
				return false
			}
		}
		return true
	})
}

// waitDone waits until n distinct runs got a written "complete" verdict.
func (e *WorkerEvents) WaitDone(t *testing.T, n int) {
	t.Helper()
	e.WaitFor(t, fmt.Sprintf("%d runs done", n), func(events []docket.WorkerEvent) bool { return WorkerDistinctWritten(events, "complete") >= n })
}

// WorkerAllWritten reports whether events hold a written verdict of each of
// runIDs.
func WorkerAllWritten(events []docket.WorkerEvent, verdict string, runIDs []string) bool {
	for _, id := range runIDs {
		if !WorkerWritten(events, id, verdict) {
			return false
		}
	}
	return true
}

// WorkerWritten reports whether events hold a written verdict of runID.
func WorkerWritten(events []docket.WorkerEvent, runID, verdict string) bool {
	for _, ev := range events {
		if ev.Kind == docket.EventVerdict && ev.RunID == runID && ev.Verdict == verdict && ev.Outcome == docket.VerdictWritten {
			return true
		}
	}
	return false
}

// WorkerFenced is the condition that the claim fence refused a verdict of
// runID.
func WorkerFenced(runID, verdict string) func([]docket.WorkerEvent) bool {
	return func(events []docket.WorkerEvent) bool {
		return WorkerCountEvents(events, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventVerdict && ev.RunID == runID && ev.Verdict == verdict && ev.Outcome == docket.VerdictFenced
		}) > 0
	}
}

// WorkerDropped returns a condition that holds once a verdict of kind
// verdict on runID was dropped unsent: its claim was given up, or may have
// expired before the write could be sent.
func WorkerDropped(runID, verdict string) func([]docket.WorkerEvent) bool {
	return func(events []docket.WorkerEvent) bool {
		return WorkerCountEvents(events, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventVerdict && ev.RunID == runID && ev.Verdict == verdict && ev.Outcome == docket.VerdictDropped
		}) > 0
	}
}

// WorkerListening reports whether events hold a LISTEN session that took
// effect.
func WorkerListening(evs []docket.WorkerEvent) bool {
	return WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventListening }) > 0
}

// WorkerRetentionPassed reports whether events hold the end of a pass of
// the retention cleaner (a pass a stop cuts short reports nothing).
func WorkerRetentionPassed(evs []docket.WorkerEvent) bool {
	return WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventRetention }) > 0
}

// WorkerSchedulePassed reports whether events hold a schedule pass that
// ended well, which read the domain's next tick last.
func WorkerSchedulePassed(evs []docket.WorkerEvent) bool {
	return WorkerCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventSchedulePass && ev.Err == nil }) > 0
}

// WorkerDistinctWritten counts the distinct runs with a written verdict.
func WorkerDistinctWritten(events []docket.WorkerEvent, verdict string) int {
	runs := map[string]bool{}
	for _, ev := range events {
		if ev.Kind == docket.EventVerdict && ev.Verdict == verdict && ev.Outcome == docket.VerdictWritten {
			runs[ev.RunID] = true
		}
	}
	return len(runs)
}

// WorkerCountEvents counts the events for which match holds.
func WorkerCountEvents(events []docket.WorkerEvent, match func(docket.WorkerEvent) bool) int {
	n := 0
	for _, ev := range events {
		if match(ev) {
			n++
		}
	}
	return n
}

// WorkerEventsOf returns the events of kind among events, in order.
func WorkerEventsOf(events []docket.WorkerEvent, kind docket.WorkerEventKind) []docket.WorkerEvent {
	var out []docket.WorkerEvent
	for _, ev := range events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// WorkerDescribe summarizes the last events of a wait that timed out.
func WorkerDescribe(events []docket.WorkerEvent) string {
	const last = 20
	var b strings.Builder
	if len(events) > last {
		fmt.Fprintf(&b, "%d earlier events ... ", len(events)-last)
		events = events[len(events)-last:]
	}
	for _, ev := range events {
		fmt.Fprintf(&b, "[%s %s %s %s leases=%d err=%v] ", ev.Kind, ev.RunID, ev.Verdict, ev.Outcome, ev.Leases, ev.Err)
	}
	return b.String()
}

// WorkerExpectWrittenOnce fails the test unless events report exactly one
// written verdict for each of runIDs: a Worker that acknowledged a commit
// it did not make, or lost one it acknowledged, shows as a run written
// twice.
func WorkerExpectWrittenOnce(t *testing.T, events []docket.WorkerEvent, runIDs []string) {
	t.Helper()
	written := map[string]int{}
	for _, ev := range WorkerEventsOf(events, docket.EventVerdict) {
		if ev.Outcome == docket.VerdictWritten {
			written[ev.RunID]++
		}
	}
	for _, id := range runIDs {
		if written[id] != 1 {
			t.Errorf("run %s: %d verdicts reported written, want 1", id, written[id])
		}
	}
}
