package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A commit with AttemptCount and a Failure counts the attempt and appends
// the failure in the same fenced statement: the entry's time is the
// commit's own updated_at. AttemptKeep leaves both, AttemptReset restarts
// the counter and keeps the history.
func TestRunErrorsCommitRecordsTheFailureInTheFencedCommit(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	ctx := testkit.Context(t)
	acme := docket.Tenant("acme")
	s.Insert("acme", "r")
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 0)
	l := s.Claim("acme", "r")

	run, err := s.Client.Commit(ctx, docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq, Disposition: docket.RetainClaim(),
		Attempt: docket.AttemptCount, Failure: &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: "db down"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Attempt != 1 || len(run.Errors) != 1 || run.Errors[0] != (docket.RunError{Attempt: 1, At: run.Errors[0].At, Kind: "error", Error: "db down"}) ||
		!run.Errors[0].At.Equal(run.UpdatedAt) {
		t.Fatalf("committed run attempt %d, errors %+v (updated at %s)", run.Attempt, run.Errors, run.UpdatedAt)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 1, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "db down"})

	// A retry without an error counts the attempt and records nothing.
	run, err = s.Client.Commit(ctx, docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq + 1, Disposition: docket.RetainClaim(),
		Attempt: docket.AttemptCount})
	if err != nil || run.Attempt != 2 {
		t.Fatalf("counted commit: attempt %d, %v", run.Attempt, err)
	}
	if _, err = s.Client.Commit(ctx, docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq + 2, Disposition: docket.RetainClaim(),
		Attempt: docket.AttemptKeep}); err != nil {
		t.Fatal(err)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 2, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "db down"})
	if _, err = s.Client.Commit(ctx, docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq + 3, Disposition: docket.RetainClaim(),
		Attempt: docket.AttemptCount, Failure: &docket.AttemptFailure{Kind: docket.ErrorKindPanic, Error: "nil map"}}); err != nil {
		t.Fatal(err)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 3, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "db down"}, testkit.RunErrorEntry{Attempt: 3, Kind: "panic", Error: "nil map"})
	// The zero AttemptReset restarts the counter, as every commit is progress.
	if _, err = s.Client.Commit(ctx, docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq + 4, Disposition: docket.RetainClaim()}); err != nil {
		t.Fatal(err)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 0, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "db down"}, testkit.RunErrorEntry{Attempt: 3, Kind: "panic", Error: "nil map"})

	// A stale fence records nothing.
	_, err = s.Client.Commit(ctx, docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq, Disposition: docket.RetainClaim(),
		Attempt: docket.AttemptCount, Failure: &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: "late"}})
	if !errors.Is(err, docket.ErrStaleFence) {
		t.Fatalf("stale commit: %v, want ErrStaleFence", err)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 0, testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: "db down"}, testkit.RunErrorEntry{Attempt: 3, Kind: "panic", Error: "nil map"})
}

// A failure the request cannot carry is ErrInvalidArgument and changes
// nothing: a failure without AttemptCount, an unknown kind, an unknown
// attempt change.
func TestRunErrorsCommitRefusesAnInvalidFailure(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	acme := docket.Tenant("acme")
	s.Insert("acme", "r")
	l := s.Claim("acme", "r")
	before := s.Row("r")
	for name, req := range map[string]docket.CommitRequest{
		"failure with keep":  {Attempt: docket.AttemptKeep, Failure: &docket.AttemptFailure{Kind: "error", Error: "x"}},
		"failure with reset": {Failure: &docket.AttemptFailure{Kind: "error", Error: "x"}},
		"unknown kind":       {Attempt: docket.AttemptCount, Failure: &docket.AttemptFailure{Kind: "timeout", Error: "x"}},
		"empty kind":         {Attempt: docket.AttemptCount, Failure: &docket.AttemptFailure{Error: "x"}},
		"unknown change":     {Attempt: docket.AttemptChange(3)},
		"negative change":    {Attempt: docket.AttemptChange(-1)},
	} {
		req.Holder, req.ExpectedSeq, req.Disposition = l.Holder, l.Seq, docket.ReleaseTerminal(docket.StatusFailed)
		if _, err := s.Client.Commit(testkit.Context(t), req); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if after := s.Row("r"); after.Seq != before.Seq || !after.UpdatedAt.Equal(before.UpdatedAt) || after.Status != before.Status ||
		after.Token == nil || *after.Token != *before.Token {
		t.Fatalf("refused commits changed the run:\n%+v\n%+v", before, after)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 0)
}

// An error text is cut to MaxRunErrorBytes at a character boundary, and
// invalid UTF-8 and NUL bytes, which PostgreSQL text cannot hold, become
// U+FFFD.
func TestRunErrorsTruncatesOnAUTF8Boundary(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	acme := docket.Tenant("acme")
	s.Insert("acme", "r")
	l := s.Claim("acme", "r")
	long := strings.Repeat("x", 3000)
	euros := strings.Repeat("€", 700) // 3 bytes each: 666 fit in 2,000 bytes
	exact := strings.Repeat("é", 1000) + "!"
	texts := []string{long, euros, exact, "a\x00b\xffc", ""}
	for i, text := range texts {
		if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq + int64(i),
			Disposition: docket.RetainClaim(), Attempt: docket.AttemptCount,
			Failure: &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: text}}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	if docket.MaxRunErrorBytes != 2000 {
		t.Fatalf("MaxRunErrorBytes = %d, want 2000", docket.MaxRunErrorBytes)
	}
	run := testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 5,
		testkit.RunErrorEntry{Attempt: 1, Kind: "error", Error: strings.Repeat("x", 2000)},
		testkit.RunErrorEntry{Attempt: 2, Kind: "error", Error: strings.Repeat("€", 666)},
		testkit.RunErrorEntry{Attempt: 3, Kind: "error", Error: strings.Repeat("é", 1000)},
		testkit.RunErrorEntry{Attempt: 4, Kind: "error", Error: "a\uFFFDb\uFFFDc"},
		testkit.RunErrorEntry{Attempt: 5, Kind: "error", Error: ""})
	if n := len(run.Errors[1].Error); n != 1998 {
		t.Fatalf("cut multi-byte text holds %d bytes, want 1998", n)
	}
}

// The history keeps the newest MaxRunErrors entries: the 21st failure drops
// the oldest, and the counter goes on counting.
func TestRunErrorsKeepsTheNewestTwenty(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	acme := docket.Tenant("acme")
	s.Insert("acme", "r")
	l := s.Claim("acme", "r")
	commit := func(i int, text string) {
		t.Helper()
		if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: l.Holder, ExpectedSeq: l.Seq + int64(i-1),
			Disposition: docket.RetainClaim(), Attempt: docket.AttemptCount,
			Failure: &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: text}}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
	}
	for i, text := range testkit.RunErrorTexts("failure %d", 1, 20) {
		commit(i+1, text)
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 20, testkit.RunErrors(1, "error", testkit.RunErrorTexts("failure %d", 1, 20)...)...)
	commit(21, "failure 21")
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 21, testkit.RunErrors(2, "error", testkit.RunErrorTexts("failure %d", 2, 21)...)...)
	for i := 22; i <= 25; i++ {
		commit(i, testkit.RunErrorTexts("failure %d", i, i)[0])
	}
	testkit.RunErrorExpect(t, s.Pool, s.Client, acme, "r", 25, testkit.RunErrors(6, "error", testkit.RunErrorTexts("failure %d", 6, 25)...)...)
	if docket.MaxRunErrors != 20 {
		t.Fatalf("MaxRunErrors = %d, want 20", docket.MaxRunErrors)
	}
}

// The schema's named checks refuse a history no commit writes: more than 20
// entries, a non-array, an entry of an unknown kind or without its fields,
// and a negative counter.
func TestRunErrorsSchemaChecks(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r")
	entry := `{"attempt": 1, "at": "2026-01-01T00:00:00Z", "kind": "error", "error": "x"}`
	for constraint, update := range map[string]string{
		"docket_runs_errors_bound_check": `update docket_runs set errors = (select jsonb_agg('` + entry + `'::jsonb) from generate_series(1, 21))`,
		"docket_runs_errors_array_check": `update docket_runs set errors = '{}'`,
		"docket_runs_errors_entry_check": `update docket_runs set errors = '[{"attempt": 1, "at": "2026-01-01T00:00:00Z", "kind": "timeout", "error": "x"}]'`,
		"docket_runs_attempt_check":      `update docket_runs set attempt = -1`,
	} {
		if !violates(t, s.Pool, constraint, update) {
			t.Errorf("%s: want a violation of %s", update, constraint)
		}
	}
	for _, bad := range []string{
		`[{"at": "2026-01-01T00:00:00Z", "kind": "error", "error": "x"}]`,
		`[{"attempt": 0, "at": "2026-01-01T00:00:00Z", "kind": "error", "error": "x"}]`,
		`[{"attempt": 1, "kind": "error", "error": "x"}]`,
		`[{"attempt": 1, "at": "2026-01-01T00:00:00Z", "kind": "error"}]`,
		`[{"attempt": 1, "at": "2026-01-01T00:00:00Z", "kind": "error", "error": 7}]`,
		`["x"]`,
	} {
		if !violates(t, s.Pool, "docket_runs_errors_entry_check", `update docket_runs set errors = $1::jsonb`, bad) {
			t.Errorf("errors %s: want a violation of docket_runs_errors_entry_check", bad)
		}
	}
	testkit.ExecSQL(t, s.Pool, `update docket_runs set errors = $1::jsonb`, "["+entry+"]")
}
