package lifecycle

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The marker lifetime table: each test claims one admitted run and asserts
// claim, wake, marker, attempts and the scope's unfinished count before and
// after one lifecycle operation.

func TestRunStoreRefreshKeepsClaimAndMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)
	if before.Attempts != 1 || before.Unfinished != 1 {
		t.Fatalf("before: want attempts 1, unfinished 1, got %+v", before)
	}

	claimedAt, err := s.Client.RefreshClaim(testkit.Context(t), lease.Holder)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	after := s.Row("r1")
	expectClaimed(t, after, lease.Holder.Token, *before.AdmittedAt)
	expectSameTime(t, "claimed_at", after.ClaimedAt, claimedAt)
	expectSameTime(t, "claimed_at moves to now", after.ClaimedAt, after.UpdatedAt)
	if after.Attempts != 1 || after.Unfinished != 1 || after.Seq != before.Seq {
		t.Fatalf("after: want attempts 1, unfinished 1, seq %d, got %+v", before.Seq, after)
	}

	// A claim taken with a clock ahead of the database keeps its claimed_at.
	s.Insert("acme", "r2")
	ahead := s.DbNow().Add(30 * time.Minute)
	aheadLease := s.ClaimAt("acme", "r2", ahead)
	claimedAt, err = s.Client.RefreshClaim(testkit.Context(t), aheadLease.Holder)
	if err != nil {
		t.Fatalf("refresh ahead: %v", err)
	}
	expectSameTime(t, "claimed_at never moves back", s.Row("r2").ClaimedAt, ahead)
	if !claimedAt.Equal(ahead) {
		t.Fatalf("refresh returned %s, want %s", claimedAt, ahead)
	}
}

func TestRunStoreReleaseKeepsMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	released, err := s.Client.ReleaseClaim(testkit.Context(t), lease.Holder)
	if err != nil || !released {
		t.Fatalf("release: released %v, err %v", released, err)
	}
	after := s.Row("r1")
	expectUnclaimed(t, after)
	expectSameTime(t, "wake = now", after.WakeAt, after.UpdatedAt)
	expectSameTime(t, "marker kept", after.AdmittedAt, *before.AdmittedAt)
	if after.Status != "running" || after.Attempts != 1 || after.Unfinished != 1 {
		t.Fatalf("after: want running, attempts 1, unfinished 1, got %+v", after)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionAdmittedReady)

	// Idempotent: the second release finds no claim and changes nothing.
	released, err = s.Client.ReleaseClaim(testkit.Context(t), lease.Holder)
	if err != nil || released {
		t.Fatalf("second release: released %v, err %v", released, err)
	}
	expectRowUnchanged(t, "second release", after, s.Row("r1"))

	// Reacquisition by the next claim call keeps the original marker.
	again := s.Claim("acme", "r1")
	reacquired := s.Row("r1")
	expectClaimed(t, reacquired, again.Holder.Token, *before.AdmittedAt)
	if reacquired.Attempts != 2 || reacquired.Unfinished != 1 {
		t.Fatalf("reacquired: want attempts 2, unfinished 1, got %+v", reacquired)
	}
}

func TestRunStoreCommitRetainClaimKeepsMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	run, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1, State: json.RawMessage(`{"n":1}`),
		CheckpointType: "step", Disposition: docket.RetainClaim(),
	})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	if run.CheckpointSeq != lease.Seq+1 || run.Step != 1 || string(run.State) != `{"n": 1}` ||
		run.LatestCheckpointType != "step" || run.Status != docket.StatusRunning {
		t.Fatalf("committed run: %+v", run)
	}
	after := s.Row("r1")
	expectClaimed(t, after, lease.Holder.Token, *before.AdmittedAt)
	expectSameTime(t, "claimed_at refreshed", after.ClaimedAt, after.UpdatedAt)
	if after.Attempts != 0 || after.Abandons != 0 || after.Unfinished != 1 || after.Seq != lease.Seq+1 {
		t.Fatalf("after: want attempts 0, unfinished 1, seq %d, got %+v", lease.Seq+1, after)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionAdmittedClaimed)
}

func TestRunStoreCommitYieldKeepsMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1, Disposition: docket.ReleaseImmediate(),
	}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	after := s.Row("r1")
	expectUnclaimed(t, after)
	expectSameTime(t, "wake = now", after.WakeAt, after.UpdatedAt)
	expectSameTime(t, "marker kept", after.AdmittedAt, *before.AdmittedAt)
	if after.Status != "running" || after.Attempts != 0 || after.Unfinished != 1 || after.Seq != lease.Seq+1 {
		t.Fatalf("after: want running, attempts 0, unfinished 1, got %+v", after)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionAdmittedReady)
}

func TestRunStoreCommitReleaseAtClearsMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	at := s.DbNow().Add(time.Hour)
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1, Disposition: docket.ReleaseAt(at),
	}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	after := s.Row("r1")
	expectUnclaimed(t, after)
	expectNoMarker(t, after)
	expectSameTime(t, "wake", after.WakeAt, at)
	if after.Status != "running" || after.Attempts != 0 || after.Unfinished != 1 {
		t.Fatalf("after: want running, attempts 0, unfinished 1, got %+v", after)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionInactive)
}

func TestRunStoreCommitReleaseExternalClearsMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1, Disposition: docket.ReleaseExternal(),
	}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	after := s.Row("r1")
	expectUnclaimed(t, after)
	expectNoMarker(t, after)
	if after.Status != "waiting" || after.WakeAt != nil || after.Attempts != 0 || after.Unfinished != 1 {
		t.Fatalf("after: want waiting, no wake, attempts 0, unfinished 1, got %+v", after)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionInactive)

	// Resume is an unclaimed signal: running, due now, queued (no marker).
	res, err := s.Client.MutateRun(testkit.Context(t), docket.Tenant("acme"), "r1", func(r docket.Run) (docket.Mutation, error) {
		if r.Status != docket.StatusWaiting {
			return docket.Mutation{}, nil
		}
		return docket.Mutation{Status: docket.StatusRunning}, nil
	})
	if err != nil || !res.Changed {
		t.Fatalf("resume: changed %v, err %v", res.Changed, err)
	}
	resumed := s.Row("r1")
	expectUnclaimed(t, resumed)
	expectNoMarker(t, resumed)
	expectSameTime(t, "wake = now", resumed.WakeAt, resumed.UpdatedAt)
	if resumed.Status != "running" || resumed.Unfinished != 1 {
		t.Fatalf("resumed: want running, unfinished 1, got %+v", resumed)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionQueued)
}

func TestRunStoreCommitTerminalClearsMarker(t *testing.T) {
	for _, status := range []docket.RunStatus{docket.StatusDone, docket.StatusFailed, docket.StatusCancelled} {
		t.Run(string(status), func(t *testing.T) {
			s := testkit.NewRunStore(t, 2)
			s.Insert("acme", "r1")
			lease := s.Claim("acme", "r1")
			before := s.Row("r1")
			expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)
			if before.Unfinished != 1 {
				t.Fatalf("before: want unfinished 1, got %d", before.Unfinished)
			}

			run, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
				Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 3, State: json.RawMessage(`"end"`),
				Disposition: docket.ReleaseTerminal(status),
			})
			if err != nil {
				t.Fatalf("commit: %v", err)
			}
			if run.Status != status || run.FinishedAt == nil {
				t.Fatalf("committed run: %+v", run)
			}
			after := s.Row("r1")
			expectUnclaimed(t, after)
			expectNoMarker(t, after)
			expectSameTime(t, "finished_at", after.FinishedAt, after.UpdatedAt)
			if after.Status != string(status) || after.WakeAt != nil || after.Attempts != 0 || after.Unfinished != 0 {
				t.Fatalf("after: want %s, no wake, attempts 0, unfinished 0, got %+v", status, after)
			}
			s.ExpectAdmission("acme", "r1", docket.AdmissionInactive)
		})
	}
}

func TestRunStoreUnclaimedSignalsClearMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "claimed")
	s.Insert("acme", "ready")
	interrupted := s.Claim("acme", "claimed")
	yielded := s.Claim("acme", "ready")
	if _, err := s.Client.ReleaseClaim(testkit.Context(t), yielded.Holder); err != nil {
		t.Fatalf("release: %v", err)
	}

	// Interrupt of a claimed, admitted run: the claim is revoked and the run
	// is queued again.
	before := s.Row("claimed")
	expectClaimed(t, before, interrupted.Holder.Token, *before.AdmittedAt)
	res, err := s.Client.MutateRun(testkit.Context(t), docket.Tenant("acme"), "claimed", func(r docket.Run) (docket.Mutation, error) {
		if !r.Claimed() || r.Status != docket.StatusRunning {
			t.Errorf("decision saw %+v, want the claimed running run", r)
		}
		return docket.Mutation{Status: docket.StatusRunning}, nil
	})
	if err != nil || !res.Changed {
		t.Fatalf("interrupt: changed %v, err %v", res.Changed, err)
	}
	after := s.Row("claimed")
	expectUnclaimed(t, after)
	expectNoMarker(t, after)
	expectSameTime(t, "wake = now", after.WakeAt, after.UpdatedAt)
	if after.Status != "running" || after.Attempts != before.Attempts || after.Unfinished != 2 {
		t.Fatalf("interrupted: want running, attempts %d, unfinished 2, got %+v", before.Attempts, after)
	}
	s.ExpectAdmission("acme", "claimed", docket.AdmissionQueued)
	// The interrupted holder is stale now.
	_, err = s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: interrupted.Holder, ExpectedSeq: interrupted.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone),
	})
	testkit.ExpectErrorIs(t, "commit after interrupt", err, docket.ErrStaleFence)
	expectRowUnchanged(t, "stale commit", after, s.Row("claimed"))

	// Cancel of an admitted-ready run.
	ready := s.Row("ready")
	if ready.AdmittedAt == nil || ready.Token != nil {
		t.Fatalf("ready: want admitted and unclaimed, got %+v", ready)
	}
	res, err = s.Client.Cancel(testkit.Context(t), docket.Tenant("acme"), "ready")
	if err != nil || !res.Changed || res.Run.Status != docket.StatusCancelled {
		t.Fatalf("cancel: %+v, err %v", res, err)
	}
	cancelled := s.Row("ready")
	expectUnclaimed(t, cancelled)
	expectNoMarker(t, cancelled)
	expectSameTime(t, "finished_at", cancelled.FinishedAt, cancelled.UpdatedAt)
	if cancelled.Status != "cancelled" || cancelled.WakeAt != nil || cancelled.Unfinished != 1 {
		t.Fatalf("cancelled: want cancelled, no wake, unfinished 1, got %+v", cancelled)
	}
	res, err = s.Client.Cancel(testkit.Context(t), docket.Tenant("acme"), "ready")
	if err != nil || res.Changed {
		t.Fatalf("second cancel: changed %v, err %v", res.Changed, err)
	}
	expectRowUnchanged(t, "second cancel", cancelled, s.Row("ready"))
}

func TestRunStoreAbandonClearsMarkerWithBackoff(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	// Backoffs of abandons 0, 1 and 2 with base 2s and cap 5s: 2s, 4s, 5s.
	for i, want := range []time.Duration{2 * time.Second, 4 * time.Second, 5 * time.Second} {
		lease := s.ClaimAt("acme", "r1", s.DueAt("r1"))
		before := s.Row("r1")
		expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)
		res, err := s.Client.AbandonClaim(testkit.Context(t), docket.AbandonRequest{
			Holder: lease.Holder, ExpectedSeq: lease.Seq,
			BackoffBase: 2 * time.Second, BackoffCap: 5 * time.Second, MaxAbandons: 4,
		})
		if err != nil || res.Outcome != docket.AbandonRescheduled {
			t.Fatalf("abandon %d: %+v, err %v", i, res, err)
		}
		after := s.Row("r1")
		expectUnclaimed(t, after)
		expectNoMarker(t, after)
		expectSameTime(t, "wake after backoff", after.WakeAt, after.UpdatedAt.Add(want))
		if after.Status != "running" || after.Abandons != int32(i+1) || after.Attempts != before.Attempts ||
			after.PoisonedAt != nil || after.Unfinished != 1 {
			t.Fatalf("abandon %d: want running, abandons %d, attempts %d, unfinished 1, got %+v",
				i, i+1, before.Attempts, after)
		}
	}

	// An explicit retry time replaces the backoff.
	lease := s.ClaimAt("acme", "r1", s.DueAt("r1"))
	retryAt := s.DbNow().Add(42 * time.Minute)
	res, err := s.Client.AbandonClaim(testkit.Context(t), docket.AbandonRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, RetryAt: retryAt,
	})
	if err != nil || res.Outcome != docket.AbandonRescheduled {
		t.Fatalf("abandon with retry time: %+v, err %v", res, err)
	}
	after := s.Row("r1")
	expectNoMarker(t, after)
	expectSameTime(t, "explicit retry", after.WakeAt, retryAt)
	if after.Abandons != 4 {
		t.Fatalf("want abandons 4 without a limit, got %d", after.Abandons)
	}
}

func TestRunStoreAbandonLimitPoisonsAndRetryQueues(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	res, err := s.Client.AbandonClaim(testkit.Context(t), docket.AbandonRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, MaxAbandons: 1,
	})
	if err != nil || res.Outcome != docket.AbandonPoisoned || !res.Run.Poisoned() {
		t.Fatalf("abandon: %+v, err %v", res, err)
	}
	poisoned := s.Row("r1")
	expectUnclaimed(t, poisoned)
	expectNoMarker(t, poisoned)
	expectSameTime(t, "poisoned_at", poisoned.PoisonedAt, poisoned.UpdatedAt)
	if poisoned.Status != "running" || poisoned.WakeAt != nil || poisoned.PoisonReason == nil ||
		*poisoned.PoisonReason != "max_claim_abandons_exceeded" || poisoned.Abandons != 1 || poisoned.Unfinished != 1 {
		t.Fatalf("poisoned: want running, no wake, max_claim_abandons_exceeded, abandons 1, unfinished 1, got %+v", poisoned)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionInactive)

	run, err := s.Client.RetryPoisonedRun(testkit.Context(t), docket.Tenant("acme"), "r1")
	if err != nil || run.Poisoned() {
		t.Fatalf("retry: %+v, err %v", run, err)
	}
	retried := s.Row("r1")
	expectUnclaimed(t, retried)
	expectNoMarker(t, retried)
	expectSameTime(t, "wake = now", retried.WakeAt, retried.UpdatedAt)
	if retried.PoisonedAt != nil || retried.PoisonReason != nil || retried.Attempts != 0 ||
		retried.Abandons != 0 || retried.Unfinished != 1 {
		t.Fatalf("retried: want healthy, counters 0, unfinished 1, got %+v", retried)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionQueued)

	_, err = s.Client.RetryPoisonedRun(testkit.Context(t), docket.Tenant("acme"), "r1")
	testkit.ExpectErrorIs(t, "retry of a healthy run", err, docket.ErrInvalidTransition)
	expectRowUnchanged(t, "retry of a healthy run", retried, s.Row("r1"))
}
