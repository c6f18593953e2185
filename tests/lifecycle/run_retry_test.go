package lifecycle

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// failAfterCommit claims runID, commits step 3 with a state and the
// checkpoint type "work", then finishes it with status through a terminal
// commit, so the run carries two checkpoints.
func failAfterCommit(s *testkit.RunStore, tenant, runID string, status docket.RunStatus) {
	s.T.Helper()
	lease := s.Claim(tenant, runID)
	if _, err := s.Client.Commit(testkit.Context(s.T), docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq,
		Step: 3, State: json.RawMessage(`{"n":3}`), CheckpointType: "work", Disposition: docket.ReleaseTerminal(status)}); err != nil {
		s.T.Fatalf("finish %s: %v", runID, err)
	}
}

// A failed and a cancelled run come back as queued running runs: no claim,
// no marker, no poison, no finished_at, fresh claim counters, due now or at
// WakeAt, state, step and checkpoint_seq kept. The unfinished count rises by
// exactly one per retry and no ring position moves.
func TestRetryRunRevivesFailedAndCancelledRuns(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	s.Insert("acme", "failed")
	failAfterCommit(s, "acme", "failed", docket.StatusFailed)
	s.Insert("beta", "b-1")
	testkit.ExecSQL(t, s.Pool, `update docket_runs set claim_attempts = 3, claim_abandons = 2 where run_id = 'failed'`)
	s.Insert("acme", "cancelled")
	if _, err := s.Client.Cancel(ctx, docket.Tenant("acme"), "cancelled"); err != nil {
		t.Fatal(err)
	}
	s.Insert("acme", "queued")
	ring := testkit.RetryRing(t, s.Pool)
	testkit.RetryExpectRing(t, s.Pool, withUnfinished(ring, "acme", 1))

	before := s.DbNow()
	run, err := s.Client.RetryRun(ctx, docket.Tenant("acme"), "failed", docket.RetryRunOptions{})
	if err != nil {
		t.Fatalf("retry failed run: %v", err)
	}
	after := s.DbNow()
	if run.Status != docket.StatusRunning || run.Step != 3 || run.CheckpointSeq != 1 || run.LatestCheckpointType != "work" ||
		string(run.State) != `{"n": 3}` || run.ClaimAttempts != 0 || run.ClaimAbandons != 0 ||
		run.FinishedAt != nil || run.PoisonedAt != nil || run.ClaimedAt != nil || run.WakeAt == nil {
		t.Fatalf("retried run = %+v", run)
	}
	row := s.Row("failed")
	if row.Status != "running" || row.Token != nil || row.ClaimedAt != nil || row.AdmittedAt != nil ||
		row.PoisonedAt != nil || row.PoisonReason != nil || row.FinishedAt != nil ||
		row.Attempts != 0 || row.Abandons != 0 || row.Seq != 1 || row.Unfinished != 2 ||
		row.WakeAt == nil || row.WakeAt.Before(before) || row.WakeAt.After(after) {
		t.Fatalf("row after retry = %+v (database clock %s..%s)", row, before, after)
	}
	s.ExpectAdmission("acme", "failed", docket.AdmissionQueued)
	testkit.RetryExpectRing(t, s.Pool, withUnfinished(ring, "acme", 2))

	wake := s.DbNow().Add(time.Hour).Truncate(time.Microsecond)
	run, err = s.Client.RetryRun(ctx, docket.Tenant("acme"), "cancelled", docket.RetryRunOptions{WakeAt: wake})
	if err != nil {
		t.Fatalf("retry cancelled run: %v", err)
	}
	if run.Status != docket.StatusRunning || run.CheckpointSeq != 0 || run.WakeAt == nil || !run.WakeAt.Equal(wake) {
		t.Fatalf("retried cancelled run = %+v, want running, seq 0, due at %s", run, wake)
	}
	expectSameTime(t, "wake_at of the cancelled run", s.Row("cancelled").WakeAt, wake)
	s.ExpectAdmission("acme", "cancelled", docket.AdmissionInactive)
	testkit.RetryExpectRing(t, s.Pool, withUnfinished(ring, "acme", 3))
}

// Refusals change nothing: a done run without Force, running, waiting and
// claimed runs (ErrInvalidTransition), another tenant's or a missing run
// (ErrNotFound), a WakeAt outside timestamptz (ErrInvalidArgument) and the
// tenantless scope under required tenancy (ErrTenantRequired). Force then
// retries the done run.
func TestRetryRunRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	s.Insert("acme", "done")
	failAfterCommit(s, "acme", "done", docket.StatusDone)
	s.Insert("acme", "claimed")
	s.Claim("acme", "claimed")
	s.Insert("acme", "waiting")
	if _, err := s.Client.MutateRun(ctx, docket.Tenant("acme"), "waiting", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusWaiting}, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.Insert("acme", "queued")
	s.Insert("acme", "poisoned")
	testkit.ExecSQL(t, s.Pool, `update docket_runs set wake_at = null, poisoned_at = now(),
		poison_reason = 'max_claim_attempts_exceeded' where run_id = 'poisoned'`)
	s.Insert("beta", "beta-failed")
	testkit.RetryFinish(t, s.Pool, "beta-failed", "failed", s.DbNow())

	ids := []string{"done", "claimed", "waiting", "queued", "poisoned", "beta-failed"}
	rows := map[string]testkit.RunRow{}
	for _, id := range ids {
		rows[id] = s.Row(id)
	}
	ring, counts := testkit.RetryRing(t, s.Pool), s.TableCounts()
	acme := docket.Tenant("acme")
	refusals := []struct {
		what   string
		scope  docket.Scope
		runID  string
		opts   docket.RetryRunOptions
		target error
	}{
		{"done without Force", acme, "done", docket.RetryRunOptions{}, docket.ErrInvalidTransition},
		{"claimed running", acme, "claimed", docket.RetryRunOptions{Force: true}, docket.ErrInvalidTransition},
		{"waiting", acme, "waiting", docket.RetryRunOptions{Force: true}, docket.ErrInvalidTransition},
		{"queued running", acme, "queued", docket.RetryRunOptions{}, docket.ErrInvalidTransition},
		{"poisoned running", acme, "poisoned", docket.RetryRunOptions{Force: true}, docket.ErrInvalidTransition},
		{"another tenant's run", acme, "beta-failed", docket.RetryRunOptions{}, docket.ErrNotFound},
		{"a missing run", acme, "nope", docket.RetryRunOptions{}, docket.ErrNotFound},
		{"WakeAt past timestamptz", docket.Tenant("beta"), "beta-failed",
			docket.RetryRunOptions{WakeAt: time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC)}, docket.ErrInvalidArgument},
		{"empty run id", acme, "", docket.RetryRunOptions{}, docket.ErrInvalidArgument},
		{"tenantless under required tenancy", docket.Tenantless, "done", docket.RetryRunOptions{}, docket.ErrTenantRequired},
	}
	for _, r := range refusals {
		_, err := s.Client.RetryRun(ctx, r.scope, r.runID, r.opts)
		testkit.ExpectErrorIs(t, r.what, err, r.target)
		for _, id := range ids {
			expectRowUnchanged(t, r.what, rows[id], s.Row(id))
		}
	}
	testkit.RetryExpectRing(t, s.Pool, ring)
	if got := s.TableCounts(); got != counts {
		t.Fatalf("table counts %v, want %v", got, counts)
	}

	run, err := s.Client.RetryRun(ctx, acme, "done", docket.RetryRunOptions{Force: true})
	if err != nil || run.Status != docket.StatusRunning || run.CheckpointSeq != 1 {
		t.Fatalf("forced retry of a done run = %+v, %v", run, err)
	}
	testkit.RetryExpectRing(t, s.Pool, withUnfinished(ring, "acme", 5))
}

// A retried run is queued under its tenant's cap: while the tenant's one
// slot is held it is not leased (another tenant is), and once the slot frees
// it is promoted, with a first attempt since its counters were reset.
func TestRetryRunIsClaimedAsQueuedUnderTheCap(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 1)
	ctx := testkit.Context(t)
	s.Insert("acme", "retried")
	failAfterCommit(s, "acme", "retried", docket.StatusFailed)
	testkit.ExecSQL(t, s.Pool, `update docket_runs set claim_attempts = 7 where run_id = 'retried'`)
	s.Insert("acme", "live")
	live := s.Claim("acme", "live")
	if _, err := s.Client.RetryRun(ctx, docket.Tenant("acme"), "retried", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Insert("beta", "b-1")

	s.Claim("beta", "b-1")
	if res := s.ClaimDue(s.DbNow(), time.Hour, 100); len(res.Leases) != 0 || len(res.Poisoned) != 0 {
		t.Fatalf("a tenant at its cap was leased its retried run: %+v", res)
	}
	s.ExpectAdmission("acme", "retried", docket.AdmissionQueued)

	if _, err := s.Client.Commit(ctx, docket.CommitRequest{Holder: live.Holder, ExpectedSeq: live.Seq,
		Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatal(err)
	}
	res := s.ClaimDue(s.DbNow(), time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "retried" || res.Leases[0].Class != docket.ClassQueuedReady ||
		res.Leases[0].Attempt != 1 || res.Leases[0].CheckpointSeq != 1 {
		t.Fatalf("after the slot freed: %+v, want the retried run promoted on its first attempt at seq 1", res)
	}
	s.ExpectAdmission("acme", "retried", docket.AdmissionAdmittedClaimed)
}

// In parked mode a retry wakes a partition parked until a write, and a retry
// due later parks it no later than its wake time (the V3 wake trigger).
func TestRetryRunWakesAParkedPartition(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimParked(t, 10)
	ctx := testkit.Context(t)
	e.Waiting("p", "p-wait")
	e.Due("p", "p-failed", testkit.ClaimBase.Add(-time.Hour))
	e.Due("p", "p-later", testkit.ClaimBase.Add(-time.Hour))
	testkit.RetryFinish(t, e.Pool, "p-failed", "failed", testkit.ClaimBase.Add(-time.Hour))
	testkit.RetryFinish(t, e.Pool, "p-later", "cancelled", testkit.ClaimBase.Add(-time.Hour))
	position := e.Position("p")

	if tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)); len(tr.Outcomes) != 0 {
		t.Fatalf("a partition with only a waiting run was leased: %+v", tr)
	}
	e.ExpectPark("p", testkit.ParkedForGood)

	wake := time.Now().Add(24 * time.Hour).Truncate(time.Microsecond)
	if _, err := e.Client.RetryRun(ctx, docket.Tenant("p"), "p-later", docket.RetryRunOptions{WakeAt: wake}); err != nil {
		t.Fatal(err)
	}
	e.ExpectPark("p", testkit.ParkedUntil(wake))

	if _, err := e.Client.RetryRun(ctx, docket.Tenant("p"), "p-failed", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	e.ExpectPark("p", testkit.Awake)
	testkit.ParkExpectInvariant(t, e.Pool)
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "claim after the retry", testkit.ClaimOutcomeIDs(tr), []string{"p-failed"})
	if e.Position("p") != position {
		t.Fatalf("ring position of p moved from %d to %d", position, e.Position("p"))
	}
}

// A retry that leaves the run due now wakes an idle listening Worker, whose
// poll interval is an hour, as an insert does.
func TestRetryRunWakesAnIdleWorker(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	s := &testkit.RunStore{T: t, Pool: pool, Client: client}
	s.Insert("t", "failed")
	failAfterCommit(s, "t", "failed", docket.StatusFailed)

	ran := make(chan string, 1)
	w, runResult := testkit.StartIdleWorker(t, client, ran)
	if _, err := client.RetryRun(testkit.Context(t), docket.Tenant("t"), "failed", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		if got != "failed" {
			t.Fatalf("the worker ran %s, want failed", got)
		}
	case <-time.After(testkit.WorkerDeadline):
		t.Fatal("the idle worker was not woken by the retry")
	}
	testkit.StopWorker(t, w, runResult)
}

// RetryRun records itself in the error history: after the entries of the
// failed attempts, an entry of kind retry with the attempts spent before it
// (at least 1), the status the run left and the time of the retry, so the
// numbering that restarts at attempt 1 is explained. The bound of 20
// entries holds.
func TestRetryRunRecordsARetryEntry(t *testing.T) {
	t.Parallel()
	s := testkit.NewRunStore(t, 4)
	ctx := testkit.Context(t)
	s.Insert("acme", "failed")
	lease := s.Claim("acme", "failed")
	if _, err := s.Client.Commit(ctx, docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1,
		State: json.RawMessage(`{}`), Disposition: docket.ReleaseTerminal(docket.StatusFailed), Attempt: docket.AttemptCount,
		Failure: &docket.AttemptFailure{Kind: docket.ErrorKindError, Error: "mail server down"}}); err != nil {
		t.Fatal(err)
	}
	s.Insert("acme", "cancelled")
	if _, err := s.Client.Cancel(ctx, docket.Tenant("acme"), "cancelled"); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]docket.RunError{
		"failed":    {{Attempt: 1, Kind: "error", Error: "mail server down"}, {Attempt: 1, Kind: "retry", Error: "retried by an operator from status failed"}},
		"cancelled": {{Attempt: 1, Kind: "retry", Error: "retried by an operator from status cancelled"}},
	} {
		run, err := s.Client.RetryRun(ctx, docket.Tenant("acme"), id, docket.RetryRunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if run.Attempt != 0 || len(run.Errors) != len(want) {
			t.Fatalf("%s after the retry: attempt %d, errors %+v; want %+v", id, run.Attempt, run.Errors, want)
		}
		for i, e := range run.Errors {
			if e.Attempt != want[i].Attempt || e.Kind != want[i].Kind || e.Error != want[i].Error {
				t.Fatalf("%s entry %d = %+v, want %+v", id, i, e, want[i])
			}
		}
		if last := run.Errors[len(run.Errors)-1]; !last.At.Equal(run.UpdatedAt) {
			t.Fatalf("%s: the retry entry is at %s, the retry wrote the run at %s", id, last.At, run.UpdatedAt)
		}
	}

	// A history at its bound drops its oldest entry for the retry's.
	testkit.ExecSQL(t, s.Pool, `update docket_runs set status = 'failed', finished_at = now(), wake_at = null,
		errors = (select jsonb_agg(jsonb_build_object('attempt', i, 'at', now(), 'kind', 'error', 'error', 'e' || i))
		            from generate_series(1, 20) i)
		 where run_id = 'failed'`)
	run, err := s.Client.RetryRun(ctx, docket.Tenant("acme"), "failed", docket.RetryRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Errors) != 20 || run.Errors[0].Error != "e2" || run.Errors[19].Kind != "retry" {
		t.Fatalf("a full history after a retry: %d entries, first %+v, last %+v", len(run.Errors), run.Errors[0], run.Errors[19])
	}
}
