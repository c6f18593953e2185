package lifecycle

import (
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// These tests pair lifecycle operations with real claim calls: an expired
// steal, reacquisition of a yielded run, promotion after a departure, and
// poison by the claim call.

func TestRunStoreExpiredStealKeepsMarkerAndFencesOldHolder(t *testing.T) {
	s := testkit.NewRunStore(t, 1)
	s.Insert("acme", "r1")
	claimedAt := s.DbNow()
	old := s.ClaimAt("acme", "r1", claimedAt)
	before := s.Row("r1")
	expectClaimed(t, before, old.Holder.Token, claimedAt)

	// Two hours later with a one-hour TTL the claim is expired and stolen.
	stealAt := claimedAt.Add(2 * time.Hour)
	res := s.ClaimDue(stealAt, time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "r1" || res.Leases[0].Class != docket.ClassExpired {
		t.Fatalf("steal: %+v", res)
	}
	thief := res.Leases[0]
	stolen := s.Row("r1")
	expectClaimed(t, stolen, thief.ClaimToken, claimedAt)
	expectSameTime(t, "claimed_at of the steal", stolen.ClaimedAt, stealAt)
	if thief.ClaimToken == old.Holder.Token || stolen.Attempts != 2 || stolen.Unfinished != 1 {
		t.Fatalf("stolen: want a new token, attempts 2, unfinished 1, got %+v", stolen)
	}

	// The old holder can neither clear the new claim nor the admission.
	_, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: old.Holder, ExpectedSeq: old.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone),
	})
	testkit.ExpectErrorIs(t, "old holder commit", err, docket.ErrStaleFence)
	expectRowUnchanged(t, "old holder commit", stolen, s.Row("r1"))

	released, err := s.Client.ReleaseClaim(testkit.Context(t), old.Holder)
	if err != nil || released {
		t.Fatalf("old holder release: released %v, err %v", released, err)
	}
	expectRowUnchanged(t, "old holder release", stolen, s.Row("r1"))

	_, err = s.Client.RefreshClaim(testkit.Context(t), old.Holder)
	testkit.ExpectErrorIs(t, "old holder refresh", err, docket.ErrClaimLost)
	expectRowUnchanged(t, "old holder refresh", stolen, s.Row("r1"))

	abandoned, err := s.Client.AbandonClaim(testkit.Context(t), docket.AbandonRequest{Holder: old.Holder, ExpectedSeq: old.Seq})
	if err != nil || abandoned.Outcome != docket.AbandonStale {
		t.Fatalf("old holder abandon: %+v, err %v", abandoned, err)
	}
	expectRowUnchanged(t, "old holder abandon", stolen, s.Row("r1"))

	// The thief holds the fence.
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: thief.Holder(), ExpectedSeq: thief.CheckpointSeq, Disposition: docket.RetainClaim(),
	}); err != nil {
		t.Fatalf("thief commit: %v", err)
	}
}

func TestRunStoreYieldedRunStaysAdmitted(t *testing.T) {
	s := testkit.NewRunStore(t, 1)
	s.Insert("acme", "r1")
	s.Insert("acme", "r2")
	now := s.DbNow()
	lease := s.ClaimAt("acme", "r1", now)
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, now)

	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1, Disposition: docket.ReleaseImmediate(),
	}); err != nil {
		t.Fatalf("yield: %v", err)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionAdmittedReady)
	s.ExpectAdmission("acme", "r2", docket.AdmissionQueued)

	// The woken yielded run is reacquired at the cap; the queued one waits.
	later := s.DbNow()
	res := s.ClaimDue(later, time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "r1" || res.Leases[0].Class != docket.ClassAdmittedReady {
		t.Fatalf("claim after yield: %+v", res)
	}
	after := s.Row("r1")
	expectClaimed(t, after, res.Leases[0].ClaimToken, now)
	if after.Seq != lease.Seq+1 || after.Unfinished != 2 {
		t.Fatalf("reacquired: %+v", after)
	}
	queued := s.Row("r2")
	expectUnclaimed(t, queued)
	expectNoMarker(t, queued)
}

func TestRunStoreWokenUnmarkedRunStaysQueued(t *testing.T) {
	s := testkit.NewRunStore(t, 1)
	s.Insert("acme", "r1")
	s.Insert("acme", "r2")
	lease := s.Claim("acme", "r1")
	at := s.DbNow().Add(time.Hour)
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Disposition: docket.ReleaseAt(at),
	}); err != nil {
		t.Fatalf("release at: %v", err)
	}
	// The freed slot goes to the queued head.
	promoted := s.Claim("acme", "r2")

	// Past its wake time r1 is due but unadmitted: queued behind the cap.
	woken := at.Add(time.Minute)
	// (A day's TTL keeps r2's live claim out of the expired class.)
	if res := s.ClaimDue(woken, 24*time.Hour, 100); res.Outcomes() != 0 {
		t.Fatalf("claim at the cap: %+v", res)
	}
	r1 := s.Row("r1")
	expectUnclaimed(t, r1)
	expectNoMarker(t, r1)
	if r1.WakeAt == nil || r1.WakeAt.After(woken) || r1.Status != "running" {
		t.Fatalf("r1: want running and due at %s, got %+v", woken, r1)
	}

	// Once r2 leaves, r1 is promoted with a fresh marker.
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: promoted.Holder, ExpectedSeq: promoted.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone),
	}); err != nil {
		t.Fatalf("finish r2: %v", err)
	}
	again := s.ClaimAt("acme", "r1", woken)
	expectClaimed(t, s.Row("r1"), again.Holder.Token, woken)
}

func TestRunStoreDepartureLetsNextQueuedRunIn(t *testing.T) {
	s := testkit.NewRunStore(t, 1)
	s.Insert("acme", "r1")
	s.Insert("acme", "r2")
	lease := s.Claim("acme", "r1")

	if res := s.ClaimDue(s.DbNow(), time.Hour, 100); res.Outcomes() != 0 {
		t.Fatalf("claim at the cap: %+v", res)
	}
	queued := s.Row("r2")
	expectUnclaimed(t, queued)
	expectNoMarker(t, queued)
	if queued.Unfinished != 2 {
		t.Fatalf("unfinished: %d", queued.Unfinished)
	}

	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{
		Holder: lease.Holder, ExpectedSeq: lease.Seq, Disposition: docket.ReleaseTerminal(docket.StatusFailed),
	}); err != nil {
		t.Fatalf("fail r1: %v", err)
	}
	now := s.DbNow()
	res := s.ClaimDue(now, time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "r2" || res.Leases[0].Class != docket.ClassQueuedReady {
		t.Fatalf("claim after departure: %+v", res)
	}
	promoted := s.Row("r2")
	expectClaimed(t, promoted, res.Leases[0].ClaimToken, now)
	if promoted.Attempts != 1 || promoted.Unfinished != 1 {
		t.Fatalf("promoted: %+v", promoted)
	}
}

func TestRunStoreClaimPoisonClearsMarker(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	if _, err := s.Client.ReleaseClaim(testkit.Context(t), lease.Holder); err != nil {
		t.Fatalf("release: %v", err)
	}
	before := s.Row("r1")
	if before.AdmittedAt == nil || before.Attempts != 1 {
		t.Fatalf("before: want admitted with one attempt, got %+v", before)
	}

	// The admitted run has used its one attempt: the claim call poisons it.
	now := s.DbNow()
	res := s.ClaimDue(now, time.Hour, 1)
	if len(res.Leases) != 0 || len(res.Poisoned) != 1 || res.Poisoned[0].RunID != "r1" {
		t.Fatalf("poison: %+v", res)
	}
	after := s.Row("r1")
	expectUnclaimed(t, after)
	expectNoMarker(t, after)
	expectSameTime(t, "poisoned_at", after.PoisonedAt, now)
	if after.Status != "running" || after.WakeAt != nil || after.PoisonReason == nil ||
		*after.PoisonReason != "max_claim_attempts_exceeded" || after.Attempts != 1 || after.Unfinished != 1 {
		t.Fatalf("after: %+v", after)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionInactive)

	// Retry makes it queued, and the next claim promotes it afresh.
	if _, err := s.Client.RetryPoisonedRun(testkit.Context(t), docket.Tenant("acme"), "r1"); err != nil {
		t.Fatalf("retry: %v", err)
	}
	s.ExpectAdmission("acme", "r1", docket.AdmissionQueued)
	later := s.DbNow()
	again := s.ClaimAt("acme", "r1", later)
	expectClaimed(t, s.Row("r1"), again.Holder.Token, later)
}
