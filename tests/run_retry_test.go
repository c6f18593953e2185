package tests

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// rtFailAfterCommit claims runID, commits step 3 with a state and the
// checkpoint type "work", then finishes it with status through a terminal
// commit, so the run carries two checkpoints.
func rtFailAfterCommit(s *rsStore, tenant, runID string, status docket.RunStatus) {
	s.t.Helper()
	lease := s.claim(tenant, runID)
	if _, err := s.client.Commit(testContext(s.t), docket.CommitRequest{Holder: lease.holder, ExpectedSeq: lease.seq,
		Step: 3, State: json.RawMessage(`{"n":3}`), CheckpointType: "work", Schedule: docket.ReleaseTerminal(status)}); err != nil {
		s.t.Fatalf("finish %s: %v", runID, err)
	}
}

// A failed and a cancelled run come back as queued running runs: no claim,
// no marker, no poison, no finished_at, fresh claim counters, due now or at
// WakeAt, state, step and checkpoint_seq kept. The unfinished count rises by
// exactly one per retry and no ring position moves.
func TestRetryRunRevivesFailedAndCancelledRuns(t *testing.T) {
	t.Parallel()
	s := newRSStore(t, 4)
	ctx := testContext(t)
	s.insert("acme", "failed")
	rtFailAfterCommit(s, "acme", "failed", docket.StatusFailed)
	s.insert("beta", "b-1")
	execSQL(t, s.pool, `update docket_runs set claim_attempts = 3, claim_abandons = 2 where run_id = 'failed'`)
	s.insert("acme", "cancelled")
	if _, err := s.client.Cancel(ctx, docket.Tenant("acme"), "cancelled"); err != nil {
		t.Fatal(err)
	}
	s.insert("acme", "queued")
	ring := rtRing(t, s.pool)
	rtExpectRing(t, s.pool, rtWithUnfinished(ring, "acme", 1))

	before := s.dbNow()
	run, err := s.client.RetryRun(ctx, docket.Tenant("acme"), "failed", docket.RetryRunOptions{})
	if err != nil {
		t.Fatalf("retry failed run: %v", err)
	}
	after := s.dbNow()
	if run.Status != docket.StatusRunning || run.Step != 3 || run.CheckpointSeq != 1 || run.LatestCheckpointType != "work" ||
		string(run.State) != `{"n": 3}` || run.ClaimAttempts != 0 || run.ClaimAbandons != 0 ||
		run.FinishedAt != nil || run.PoisonedAt != nil || run.ClaimedAt != nil || run.WakeAt == nil {
		t.Fatalf("retried run = %+v", run)
	}
	row := s.row("failed")
	if row.Status != "running" || row.Token != nil || row.ClaimedAt != nil || row.AdmittedAt != nil ||
		row.PoisonedAt != nil || row.PoisonReason != nil || row.FinishedAt != nil ||
		row.Attempts != 0 || row.Abandons != 0 || row.Seq != 1 || row.Unfinished != 2 ||
		row.WakeAt == nil || row.WakeAt.Before(before) || row.WakeAt.After(after) {
		t.Fatalf("row after retry = %+v (database clock %s..%s)", row, before, after)
	}
	s.expectAdmission("acme", "failed", docket.AdmissionQueued)
	rtExpectRing(t, s.pool, rtWithUnfinished(ring, "acme", 2))

	wake := s.dbNow().Add(time.Hour).Truncate(time.Microsecond)
	run, err = s.client.RetryRun(ctx, docket.Tenant("acme"), "cancelled", docket.RetryRunOptions{WakeAt: wake})
	if err != nil {
		t.Fatalf("retry cancelled run: %v", err)
	}
	if run.Status != docket.StatusRunning || run.CheckpointSeq != 0 || run.WakeAt == nil || !run.WakeAt.Equal(wake) {
		t.Fatalf("retried cancelled run = %+v, want running, seq 0, due at %s", run, wake)
	}
	expectSameTime(t, "wake_at of the cancelled run", s.row("cancelled").WakeAt, wake)
	s.expectAdmission("acme", "cancelled", docket.AdmissionInactive)
	rtExpectRing(t, s.pool, rtWithUnfinished(ring, "acme", 3))
}

// Refusals change nothing: a done run without Force, running, waiting and
// claimed runs (ErrInvalidTransition), another tenant's or a missing run
// (ErrNotFound), a WakeAt outside timestamptz (ErrInvalidArgument) and the
// tenantless scope under required tenancy (ErrTenantRequired). Force then
// retries the done run.
func TestRetryRunRefusalsChangeNothing(t *testing.T) {
	t.Parallel()
	s := newRSStore(t, 4)
	ctx := testContext(t)
	s.insert("acme", "done")
	rtFailAfterCommit(s, "acme", "done", docket.StatusDone)
	s.insert("acme", "claimed")
	s.claim("acme", "claimed")
	s.insert("acme", "waiting")
	if _, err := s.client.MutateRun(ctx, docket.Tenant("acme"), "waiting", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusWaiting}, nil
	}); err != nil {
		t.Fatal(err)
	}
	s.insert("acme", "queued")
	s.insert("acme", "poisoned")
	execSQL(t, s.pool, `update docket_runs set wake_at = null, poisoned_at = now(),
		poison_reason = 'max_claim_attempts_exceeded' where run_id = 'poisoned'`)
	s.insert("beta", "beta-failed")
	rtFinish(t, s.pool, "beta-failed", "failed", s.dbNow())

	ids := []string{"done", "claimed", "waiting", "queued", "poisoned", "beta-failed"}
	rows := map[string]rsRow{}
	for _, id := range ids {
		rows[id] = s.row(id)
	}
	ring, counts := rtRing(t, s.pool), s.tableCounts()
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
		_, err := s.client.RetryRun(ctx, r.scope, r.runID, r.opts)
		expectErrorIs(t, r.what, err, r.target)
		for _, id := range ids {
			expectRowUnchanged(t, r.what, rows[id], s.row(id))
		}
	}
	rtExpectRing(t, s.pool, ring)
	if got := s.tableCounts(); got != counts {
		t.Fatalf("table counts %v, want %v", got, counts)
	}

	run, err := s.client.RetryRun(ctx, acme, "done", docket.RetryRunOptions{Force: true})
	if err != nil || run.Status != docket.StatusRunning || run.CheckpointSeq != 1 {
		t.Fatalf("forced retry of a done run = %+v, %v", run, err)
	}
	rtExpectRing(t, s.pool, rtWithUnfinished(ring, "acme", 5))
}

// A retried run is queued under its tenant's cap: while the tenant's one
// slot is held it is not leased (another tenant is), and once the slot frees
// it is promoted, with a first attempt since its counters were reset.
func TestRetryRunIsClaimedAsQueuedUnderTheCap(t *testing.T) {
	t.Parallel()
	s := newRSStore(t, 1)
	ctx := testContext(t)
	s.insert("acme", "retried")
	rtFailAfterCommit(s, "acme", "retried", docket.StatusFailed)
	execSQL(t, s.pool, `update docket_runs set claim_attempts = 7 where run_id = 'retried'`)
	s.insert("acme", "live")
	live := s.claim("acme", "live")
	if _, err := s.client.RetryRun(ctx, docket.Tenant("acme"), "retried", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	s.insert("beta", "b-1")

	s.claim("beta", "b-1")
	if res := s.claimDue(s.dbNow(), time.Hour, 100); len(res.Leases) != 0 || len(res.Poisoned) != 0 {
		t.Fatalf("a tenant at its cap was leased its retried run: %+v", res)
	}
	s.expectAdmission("acme", "retried", docket.AdmissionQueued)

	if _, err := s.client.Commit(ctx, docket.CommitRequest{Holder: live.holder, ExpectedSeq: live.seq,
		Schedule: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatal(err)
	}
	res := s.claimDue(s.dbNow(), time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "retried" || res.Leases[0].Class != docket.ClassQueuedReady ||
		res.Leases[0].Attempt != 1 || res.Leases[0].CheckpointSeq != 1 {
		t.Fatalf("after the slot freed: %+v, want the retried run promoted on its first attempt at seq 1", res)
	}
	s.expectAdmission("acme", "retried", docket.AdmissionAdmittedClaimed)
}

// In parked mode a retry wakes a partition parked until a write, and a retry
// due later parks it no later than its wake time (the V3 wake trigger).
func TestRetryRunWakesAParkedPartition(t *testing.T) {
	t.Parallel()
	e := newClParked(t, 10)
	ctx := testContext(t)
	e.waiting("p", "p-wait")
	e.due("p", "p-failed", clBase.Add(-time.Hour))
	e.due("p", "p-later", clBase.Add(-time.Hour))
	rtFinish(t, e.pool, "p-failed", "failed", clBase.Add(-time.Hour))
	rtFinish(t, e.pool, "p-later", "cancelled", clBase.Add(-time.Hour))
	position := e.position("p")

	if tr := e.trace(clReq(clBase, 1, docket.PreferNone)); len(tr.Outcomes) != 0 {
		t.Fatalf("a partition with only a waiting run was leased: %+v", tr)
	}
	e.expectPark("p", parkedForGood)

	wake := time.Now().Add(24 * time.Hour).Truncate(time.Microsecond)
	if _, err := e.client.RetryRun(ctx, docket.Tenant("p"), "p-later", docket.RetryRunOptions{WakeAt: wake}); err != nil {
		t.Fatal(err)
	}
	e.expectPark("p", parkedUntil(wake))

	if _, err := e.client.RetryRun(ctx, docket.Tenant("p"), "p-failed", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	e.expectPark("p", awake)
	parkExpectInvariant(t, e.pool)
	tr := e.trace(clReq(clBase, 1, docket.PreferNone))
	clExpectIDs(t, "claim after the retry", clOutcomeIDs(tr), []string{"p-failed"})
	if e.position("p") != position {
		t.Fatalf("ring position of p moved from %d to %d", position, e.position("p"))
	}
}

// A retry that leaves the run due now wakes an idle listening Worker, whose
// poll interval is an hour, as an insert does.
func TestRetryRunWakesAnIdleWorker(t *testing.T) {
	t.Parallel()
	pool := newPool(t)
	client := openClient(t, pool, tenantFairConfig(4))
	s := &rsStore{t: t, pool: pool, client: client}
	s.insert("t", "failed")
	rtFailAfterCommit(s, "t", "failed", docket.StatusFailed)

	ran := make(chan string, 1)
	w, runResult := wkStartIdleWorker(t, client, ran)
	if _, err := client.RetryRun(testContext(t), docket.Tenant("t"), "failed", docket.RetryRunOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		if got != "failed" {
			t.Fatalf("the worker ran %s, want failed", got)
		}
	case <-time.After(wkDeadline):
		t.Fatal("the idle worker was not woken by the retry")
	}
	wkStop(t, w, runResult)
}
