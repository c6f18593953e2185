package tests

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// wkEvents records what workers report through WorkerConfig.OnEvent and
// lets a test wait until the record satisfies a predicate. Waiting is
// driven by the events themselves: the predicate is checked again each time
// one arrives, never on a timer.
type wkEvents struct {
	mu     sync.Mutex
	events []docket.WorkerEvent
	// changed is closed, and replaced, when an event arrives.
	changed chan struct{}
}

func newWkEvents() *wkEvents { return &wkEvents{changed: make(chan struct{})} }

// hook is the OnEvent of the recorded workers; several may share it.
func (e *wkEvents) hook(ev docket.WorkerEvent) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
	close(e.changed)
	e.changed = make(chan struct{})
}

// all returns every event so far.
func (e *wkEvents) all() []docket.WorkerEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]docket.WorkerEvent(nil), e.events...)
}

// waitFor waits until cond holds for the events so far, failing the test
// after wkDeadline, which only bounds a hang. cond runs outside the lock,
// on a prefix of the record that appends never touch, so it may take its
// time (say, read a committed fact from the database that the next event
// follows) without blocking the hook.
func (e *wkEvents) waitFor(t *testing.T, what string, cond func([]docket.WorkerEvent) bool) {
	t.Helper()
	timeout := time.NewTimer(wkDeadline)
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
			t.Fatalf("timed out waiting for %s; events: %v", what, wkDescribe(e.all()))
		}
	}
}

// waitWritten waits until a verdict of kind verdict was written for each of
// runIDs.
func (e *wkEvents) waitWritten(t *testing.T, verdict string, runIDs ...string) {
	t.Helper()
	e.waitFor(t, fmt.Sprintf("the %s verdicts of %v written", verdict, runIDs), func(events []docket.WorkerEvent) bool {
		return wkAllWritten(events, verdict, runIDs)
	})
}

// waitVerdicts waits until, for each run of want, a verdict of the kind
// want names was written.
func (e *wkEvents) waitVerdicts(t *testing.T, want map[string]string) {
	t.Helper()
	e.waitFor(t, fmt.Sprintf("the verdicts %v written", want), func(events []docket.WorkerEvent) bool {
		for id, verdict := range want {
			if !wkWritten(events, id, verdict) {
				return false
			}
		}
		return true
	})
}

// waitDone waits until n distinct runs got a written "complete" verdict.
func (e *wkEvents) waitDone(t *testing.T, n int) {
	t.Helper()
	e.waitFor(t, fmt.Sprintf("%d runs done", n), func(events []docket.WorkerEvent) bool { return wkDistinctWritten(events, "complete") >= n })
}

// wkAllWritten reports whether events hold a written verdict of each of
// runIDs.
func wkAllWritten(events []docket.WorkerEvent, verdict string, runIDs []string) bool {
	for _, id := range runIDs {
		if !wkWritten(events, id, verdict) {
			return false
		}
	}
	return true
}

// wkWritten reports whether events hold a written verdict of runID.
func wkWritten(events []docket.WorkerEvent, runID, verdict string) bool {
	for _, ev := range events {
		if ev.Kind == docket.EventVerdict && ev.RunID == runID && ev.Verdict == verdict && ev.Outcome == docket.VerdictWritten {
			return true
		}
	}
	return false
}

// wkFenced is the condition that the claim fence refused a verdict of
// runID.
func wkFenced(runID, verdict string) func([]docket.WorkerEvent) bool {
	return func(events []docket.WorkerEvent) bool {
		return wkCountEvents(events, func(ev docket.WorkerEvent) bool {
			return ev.Kind == docket.EventVerdict && ev.RunID == runID && ev.Verdict == verdict && ev.Outcome == docket.VerdictFenced
		}) > 0
	}
}

// wkListening reports whether events hold a LISTEN session that took
// effect.
func wkListening(evs []docket.WorkerEvent) bool {
	return wkCountEvents(evs, func(ev docket.WorkerEvent) bool { return ev.Kind == docket.EventListening }) > 0
}

// wkDistinctWritten counts the distinct runs with a written verdict.
func wkDistinctWritten(events []docket.WorkerEvent, verdict string) int {
	runs := map[string]bool{}
	for _, ev := range events {
		if ev.Kind == docket.EventVerdict && ev.Verdict == verdict && ev.Outcome == docket.VerdictWritten {
			runs[ev.RunID] = true
		}
	}
	return len(runs)
}

// wkCountEvents counts the events for which match holds.
func wkCountEvents(events []docket.WorkerEvent, match func(docket.WorkerEvent) bool) int {
	n := 0
	for _, ev := range events {
		if match(ev) {
			n++
		}
	}
	return n
}

// wkDescribe summarizes the last events of a wait that timed out.
func wkDescribe(events []docket.WorkerEvent) string {
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
