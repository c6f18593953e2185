package worker

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// commitCase is one commit of the set-based commit comparison.
type commitCase struct {
	name           string
	schedule       string
	status         string
	state          string // "" keeps the document
	checkpointType string // "" stores none
	step           int32
	// attemptChange is "reset", "keep" or "count"; errorKind and errorText
	// go with "count" only, and wakeDelayUs with the "after" schedule.
	attemptChange, errorKind, errorText string
	wakeDelayUs                         int64
	// staleToken and staleSeq make the commit miss its fence.
	staleToken, staleSeq bool
}

// outcome is what a commit left in a row, with the claim, wake and
// marker columns reduced to what a schedule decides about them, and the
// error history without its entries' times.
type outcome struct {
	Status, State, CheckpointType string
	Step                          int32
	Seq                           int64
	ClaimKept, Woken, Admitted    bool
	WakeAt                        *time.Time
	WakeDelayUs                   *int64
	Finished                      bool
	Attempts, Abandons, Attempt   int32
	Errors                        string
}

// read reads the outcome of runID. The wake time is reported only for the
// "at" schedule, whose time the commit chose, and the wake delay (wake_at
// after updated_at) only for "after", whose delay it chose; the others
// follow from the commit's own clock.
func read(t *testing.T, s *testkit.RunStore, runID string, token uuid.UUID, schedule string) outcome {
	t.Helper()
	var o outcome
	var checkpointType *string
	var claim *uuid.UUID
	var wake, admitted, finished *time.Time
	var delay *int64
	if err := s.Pool.QueryRow(testkit.Context(t), `
		select status, state::text, latest_checkpoint_type, step, checkpoint_seq, claim_token,
		       wake_at, (extract(epoch from wake_at - updated_at) * 1000000)::bigint,
		       tenant_admitted_at, finished_at, claim_attempts, claim_abandons, attempt,
		       coalesce((select jsonb_agg(e - 'at') from jsonb_array_elements(errors) e), '[]')::text
		  from docket_runs where run_id = $1`, runID).Scan(
		&o.Status, &o.State, &checkpointType, &o.Step, &o.Seq, &claim,
		&wake, &delay, &admitted, &finished, &o.Attempts, &o.Abandons, &o.Attempt, &o.Errors); err != nil {
		t.Fatalf("read %s: %v", runID, err)
	}
	if checkpointType != nil {
		o.CheckpointType = *checkpointType
	}
	o.ClaimKept = claim != nil && *claim == token
	o.Woken, o.Admitted, o.Finished = wake != nil, admitted != nil, finished != nil
	switch schedule {
	case "at":
		o.WakeAt = wake
	case "after":
		o.WakeDelayUs = delay
	}
	return o
}

// TestWorkerBatchCommitMatchesCommitPerRun commits the same verdicts on twin
// runs of two tenants, one CommitRun per run for the first and one
// CommitRuns statement for the second, and requires the same rows (with
// their attempt counters, error histories and wake delays), the same fence
// misses, the same marker_cleared facts and the same unfinished counts: the
// two statements spell one commit, and this is what holds them together.
func TestWorkerBatchCommitMatchesCommitPerRun(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 20)
	q := dbgen.New(s.Pool)
	ctx := testkit.Context(t)
	retryAt := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []commitCase{
		{name: "done", schedule: "terminal", status: "done", state: `{"r": 1}`, checkpointType: "complete", step: 3},
		{name: "failed", schedule: "terminal", status: "failed", checkpointType: "fail"},
		{name: "yield", schedule: "immediate", status: "running", checkpointType: "yield", step: 1},
		{name: "retry", schedule: "at", status: "running", checkpointType: "retry"},
		{name: "wait", schedule: "external", status: "waiting", state: `{"w": 1}`, checkpointType: "wait"},
		{name: "keep", schedule: "retain", status: "running", state: `{"k": 1}`, step: 2},
		{name: "retry-counted", schedule: "at", status: "running", checkpointType: "retry",
			attemptChange: "count", errorKind: "error", errorText: "boom"},
		{name: "backoff", schedule: "after", status: "running", checkpointType: "retry", wakeDelayUs: 1500000,
			attemptChange: "count", errorKind: "panic", errorText: "crash"},
		{name: "failed-counted", schedule: "terminal", status: "failed", checkpointType: "fail",
			attemptChange: "count", errorKind: "no_result", errorText: ""},
		{name: "yield-kept", schedule: "immediate", status: "running", checkpointType: "yield", attemptChange: "keep"},
		{name: "stale-token", schedule: "terminal", status: "done", checkpointType: "complete", staleToken: true},
		{name: "stale-seq", schedule: "terminal", status: "done", checkpointType: "complete", staleSeq: true},
	}
	tenants := []string{"per-run", "batch"}
	for _, tenant := range tenants {
		for _, c := range cases {
			s.Insert(tenant, tenant+"-"+c.name)
		}
	}
	leases := map[string]docket.Lease{}
	for len(leases) < len(tenants)*len(cases) {
		res := s.ClaimDue(s.DbNow(), time.Hour, math.MaxInt32)
		if len(res.Leases) == 0 {
			t.Fatalf("claimed %d of %d runs, then nothing", len(leases), len(tenants)*len(cases))
		}
		for _, l := range res.Leases {
			leases[l.RunID] = l
		}
	}
	// fence returns the token and expected sequence a case commits with.
	fence := func(runID string, c commitCase) (uuid.UUID, int64) {
		l := leases[runID]
		token, seq := l.ClaimToken, l.CheckpointSeq
		if c.staleToken {
			token = uuid.New()
		}
		if c.staleSeq {
			seq++
		}
		return token, seq
	}

	perRun := map[string]dbgen.CommitRunRow{}
	for _, c := range cases {
		runID := "per-run-" + c.name
		token, seq := fence(runID, c)
		params := dbgen.CommitRunParams{Step: c.step, Status: c.status, Schedule: c.schedule,
			ScopeKey: "per-run", RunID: runID, ClaimToken: token, ExpectedSeq: seq, AttemptChange: c.attemptChange}
		if c.errorKind != "" {
			params.ErrorKind, params.ErrorText = &c.errorKind, &c.errorText
		}
		if c.schedule == "after" {
			params.WakeDelayUs = &c.wakeDelayUs
		}
		if c.state != "" {
			params.State = &c.state
		}
		if c.checkpointType != "" {
			params.CheckpointType = &c.checkpointType
		}
		if c.schedule == "at" {
			params.WakeAt = &retryAt
		}
		row, err := q.CommitRun(ctx, params)
		switch {
		case c.staleToken || c.staleSeq:
			if !errors.Is(err, pgx.ErrNoRows) {
				t.Fatalf("%s: stale commit returned %+v, %v; want no row", runID, row, err)
			}
		case err != nil:
			t.Fatalf("%s: commit: %v", runID, err)
		default:
			perRun[c.name] = row
		}
	}

	var batch dbgen.CommitRunsParams
	for _, c := range cases {
		runID := "batch-" + c.name
		token, seq := fence(runID, c)
		batch.ScopeKeys = append(batch.ScopeKeys, "batch")
		batch.RunIds = append(batch.RunIds, runID)
		batch.ClaimTokens = append(batch.ClaimTokens, token.String())
		batch.ExpectedSeqs = append(batch.ExpectedSeqs, seq)
		batch.Steps = append(batch.Steps, c.step)
		batch.States = append(batch.States, c.state)
		batch.CheckpointTypes = append(batch.CheckpointTypes, c.checkpointType)
		batch.Statuses = append(batch.Statuses, c.status)
		batch.Schedules = append(batch.Schedules, c.schedule)
		batch.WakeAts = append(batch.WakeAts, retryAt)
		batch.WakeDelaysUs = append(batch.WakeDelaysUs, c.wakeDelayUs)
		batch.AttemptChanges = append(batch.AttemptChanges, c.attemptChange)
		batch.ErrorKinds = append(batch.ErrorKinds, c.errorKind)
		batch.ErrorTexts = append(batch.ErrorTexts, c.errorText)
	}
	rows, err := q.CommitRuns(ctx, batch)
	if err != nil {
		t.Fatalf("batch commit: %v", err)
	}
	byToken := map[uuid.UUID]dbgen.CommitRunsRow{}
	for _, row := range rows {
		byToken[row.ClaimToken] = row
	}
	if len(rows) != len(perRun) || len(byToken) != len(rows) {
		t.Fatalf("batch committed %d rows (%d tokens), want %d", len(rows), len(byToken), len(perRun))
	}

	for _, c := range cases {
		batchLease, perRunLease := leases["batch-"+c.name], leases["per-run-"+c.name]
		row, committed := byToken[batchLease.ClaimToken]
		single, singleCommitted := perRun[c.name]
		if committed != singleCommitted {
			t.Errorf("%s: batch committed %v, per-run committed %v", c.name, committed, singleCommitted)
			continue
		}
		if committed && (row.CheckpointSeq != single.DocketRun.CheckpointSeq || row.Step != single.DocketRun.Step ||
			row.MarkerCleared != single.MarkerCleared) {
			t.Errorf("%s: batch row %+v, per-run seq %d step %d marker cleared %v", c.name, row,
				single.DocketRun.CheckpointSeq, single.DocketRun.Step, single.MarkerCleared)
		}
		got := read(t, s, "batch-"+c.name, batchLease.ClaimToken, c.schedule)
		want := read(t, s, "per-run-"+c.name, perRunLease.ClaimToken, c.schedule)
		if got.WakeAt != nil && want.WakeAt != nil && got.WakeAt.Equal(*want.WakeAt) {
			got.WakeAt = want.WakeAt
		}
		if got.WakeDelayUs != nil && want.WakeDelayUs != nil && *got.WakeDelayUs == *want.WakeDelayUs {
			got.WakeDelayUs = want.WakeDelayUs
		}
		if got != want {
			t.Errorf("%s: batch row %+v, per-run row %+v", c.name, got, want)
		}
	}

	// The expected facts themselves, beyond agreement.
	wantCleared := map[string]bool{"done": true, "failed": true, "yield": false, "retry": true, "wait": true, "keep": false,
		"retry-counted": true, "backoff": true, "failed-counted": true, "yield-kept": false}
	for name, cleared := range wantCleared {
		row := byToken[leases["batch-"+name].ClaimToken]
		if row.CheckpointSeq != 1 || row.MarkerCleared != cleared {
			t.Errorf("%s: seq %d marker cleared %v, want seq 1 and %v", name, row.CheckpointSeq, row.MarkerCleared, cleared)
		}
	}
	if r := read(t, s, "batch-retry", leases["batch-retry"].ClaimToken, "at"); r.WakeAt == nil || !r.WakeAt.Equal(retryAt) {
		t.Errorf("retry: wake %v, want %v", r.WakeAt, retryAt)
	}
	if r := read(t, s, "batch-backoff", leases["batch-backoff"].ClaimToken, "after"); r.WakeDelayUs == nil || *r.WakeDelayUs != 1500000 ||
		r.Attempt != 1 || r.Errors != `[{"kind": "panic", "error": "crash", "attempt": 1}]` {
		t.Errorf("backoff: %+v, want a wake 1.5 s after the commit, attempt 1 and one panic entry", r)
	}
	if r := read(t, s, "batch-retry-counted", leases["batch-retry-counted"].ClaimToken, ""); r.Attempt != 1 ||
		r.Errors != `[{"kind": "error", "error": "boom", "attempt": 1}]` {
		t.Errorf("retry-counted: attempt %d errors %s, want 1 and one error entry", r.Attempt, r.Errors)
	}
	if r := read(t, s, "batch-keep", leases["batch-keep"].ClaimToken, ""); !r.ClaimKept || !r.Admitted || r.State != `{"k": 1}` {
		t.Errorf("keep: %+v, want the claim and the marker kept with the new document", r)
	}
	for _, name := range []string{"stale-token", "stale-seq"} {
		r := read(t, s, "batch-"+name, leases["batch-"+name].ClaimToken, "")
		if r.Status != "running" || r.Seq != 0 || !r.ClaimKept || !r.Admitted {
			t.Errorf("%s: %+v, want the claim untouched", name, r)
		}
	}
	unfinished := func(scope string) int64 {
		return testkit.QueryInt64(t, s.Pool, `select unfinished_count from docket_claim_schedule where scope_key = $1`, scope)
	}
	// Of the twelve runs, done, failed and failed-counted finished; the
	// waiting run still counts as unfinished.
	if got, want := unfinished("batch"), unfinished("per-run"); got != want || got != int64(len(cases)-3) {
		t.Errorf("unfinished count batch %d, per-run %d, want %d", got, want, len(cases)-3)
	}
	if got := read(t, s, "batch-done", leases["batch-done"].ClaimToken, "").State; got != `{"r": 1}` {
		t.Errorf("done: state %s", got)
	}
}
