package testkit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// RunErrorEntry is one stored error entry without its time: what a test can
// predict exactly.
type RunErrorEntry struct {
	Attempt int
	Kind    string
	Error   string
}

// RunErrorStored reads runID's attempt counter and error history with plain
// SQL, so assertions do not trust the code under test, and checks that the
// entries' times never go backwards.
func RunErrorStored(t testing.TB, pool *pgxpool.Pool, runID string) (int, []RunErrorEntry) {
	t.Helper()
	var attempt int
	var stored string
	var updatedAt time.Time
	if err := pool.QueryRow(Context(t), `select attempt, errors::text, updated_at from docket_runs where run_id = $1`,
		runID).Scan(&attempt, &stored, &updatedAt); err != nil {
		t.Fatalf("read %s: %v", runID, err)
	}
	var raw []struct {
		Attempt int       `json:"attempt"`
		At      time.Time `json:"at"`
		Kind    string    `json:"kind"`
		Error   string    `json:"error"`
	}
	if err := json.Unmarshal([]byte(stored), &raw); err != nil {
		t.Fatalf("decode the errors of %s (%s): %v", runID, stored, err)
	}
	entries := make([]RunErrorEntry, len(raw))
	for i, e := range raw {
		entries[i] = RunErrorEntry{e.Attempt, e.Kind, e.Error}
		if i > 0 && e.At.Before(raw[i-1].At) {
			t.Fatalf("errors of %s go back in time: %s", runID, stored)
		}
	}
	return attempt, entries
}

// RunErrorExpect fails unless runID's stored attempt counter and error history
// are exactly attempt and want, and FetchRun and InspectRun of scope report
// the same, the entries' times included. A panic entry is compared by its
// panic value: the frames after docket.PanicStackSeparator name lines of
// the test's own file, which tests/worker's panic stack test checks.
func RunErrorExpect(t testing.TB, pool *pgxpool.Pool, client *docket.Client, scope docket.Scope, runID string, attempt int, want ...RunErrorEntry) docket.Run {
	t.Helper()
	gotAttempt, got := RunErrorStored(t, pool, runID)
	for i := range got {
		got[i] = got[i].withoutStack()
	}
	if gotAttempt != attempt || !slices.Equal(got, want) {
		t.Fatalf("%s stores attempt %d, errors %+v; want %d, %+v", runID, gotAttempt, got, attempt, want)
	}
	run, err := client.FetchRun(Context(t), scope, runID)
	if err != nil {
		t.Fatalf("fetch %s: %v", runID, err)
	}
	inspected, err := client.InspectRun(Context(t), scope, runID)
	if err != nil {
		t.Fatalf("inspect %s: %v", runID, err)
	}
	if run.Attempt != attempt || inspected.Attempt != attempt || len(run.Errors) != len(want) ||
		!slices.Equal(run.Errors, inspected.Errors) {
		t.Fatalf("%s reads attempt %d / %d, errors %+v / %+v; want %d, %+v", runID, run.Attempt, inspected.Attempt,
			run.Errors, inspected.Errors, attempt, want)
	}
	for i, e := range run.Errors {
		if (RunErrorEntry{e.Attempt, e.Kind, e.Error}).withoutStack() != want[i] {
			t.Fatalf("%s FetchRun error %d = %+v, want %+v", runID, i, e, want[i])
		}
	}
	return run
}

// withoutStack is e with a panic entry's text cut to its panic value.
func (e RunErrorEntry) withoutStack() RunErrorEntry {
	if e.Kind == docket.ErrorKindPanic {
		e.Error, _, _ = strings.Cut(e.Error, docket.PanicStackSeparator)
	}
	return e
}

// RunErrors is want entries numbered from first for the texts.
func RunErrors(first int, kind string, texts ...string) []RunErrorEntry {
	out := make([]RunErrorEntry, len(texts))
	for i, text := range texts {
		out[i] = RunErrorEntry{first + i, kind, text}
	}
	return out
}

// RunErrorTexts is fmt.Sprintf(format, i) for i in from..to.
func RunErrorTexts(format string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf(format, i))
	}
	return out
}
