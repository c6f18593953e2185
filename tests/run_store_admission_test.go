package tests

import (
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// These tests pair lifecycle operations with real claim calls: an expired
// steal, reacquisition of a yielded run, promotion after a departure, and
// poison by the claim call.

func TestRunStoreExpiredStealKeepsMarkerAndFencesOldHolder(t *testing.T) {
	s := newRSStore(t, 1)
	s.insert("acme", "r1")
	claimedAt := s.dbNow()
	old := s.claimAt("acme", "r1", claimedAt)
	before := s.row("r1")
	expectClaimed(t, before, old.holder.Token, claimedAt)

	// Two hours later with a one-hour TTL the claim is expired and stolen.
	stealAt := claimedAt.Add(2 * time.Hour)
	res := s.claimDue(stealAt, time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "r1" || res.Leases[0].Class != docket.ClassExpired {
		t.Fatalf("steal: %+v", res)
	}
	thief := res.Leases[0]
	stolen := s.row("r1")
	expectClaimed(t, stolen, thief.ClaimToken, claimedAt)
	expectSameTime(t, "claimed_at of the steal", stolen.ClaimedAt, stealAt)
	if thief.ClaimToken == old.holder.Token || stolen.Attempts != 2 || stolen.Unfinished != 1 {
		t.Fatalf("stolen: want a new token, attempts 2, unfinished 1, got %+v", stolen)
	}

	// The old holder can neither clear the new claim nor the admission.
	_, err := s.client.Commit(testContext(t), docket.CommitRequest{
		Holder: old.holder, ExpectedSeq: old.seq, Schedule: docket.ReleaseTerminal(docket.StatusDone),
	})
	expectErrorIs(t, "old holder commit", err, docket.ErrStaleFence)
	expectRowUnchanged(t, "old holder commit", stolen, s.row("r1"))

	released, err := s.client.ReleaseClaim(testContext(t), old.holder)
	if err != nil || released {
		t.Fatalf("old holder release: released %v, err %v", released, err)
	}
	expectRowUnchanged(t, "old holder release", stolen, s.row("r1"))

	_, err = s.client.RefreshClaim(testContext(t), old.holder)
	expectErrorIs(t, "old holder refresh", err, docket.ErrClaimLost)
	expectRowUnchanged(t, "old holder refresh", stolen, s.row("r1"))

	abandoned, err := s.client.AbandonClaim(testContext(t), docket.AbandonRequest{Holder: old.holder, ExpectedSeq: old.seq})
	if err != nil || abandoned.Outcome != docket.AbandonStale {
		t.Fatalf("old holder abandon: %+v, err %v", abandoned, err)
	}
	expectRowUnchanged(t, "old holder abandon", stolen, s.row("r1"))

	// The thief holds the fence.
	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{
		Holder: thief.Holder(), ExpectedSeq: thief.CheckpointSeq, Schedule: docket.RetainClaim(),
	}); err != nil {
		t.Fatalf("thief commit: %v", err)
	}
}

func TestRunStoreYieldedRunStaysAdmitted(t *testing.T) {
	s := newRSStore(t, 1)
	s.insert("acme", "r1")
	s.insert("acme", "r2")
	now := s.dbNow()
	lease := s.claimAt("acme", "r1", now)
	before := s.row("r1")
	expectClaimed(t, before, lease.holder.Token, now)

	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{
		Holder: lease.holder, ExpectedSeq: lease.seq, Step: 1, Schedule: docket.ReleaseImmediate(),
	}); err != nil {
		t.Fatalf("yield: %v", err)
	}
	s.expectAdmission("acme", "r1", docket.AdmissionAdmittedReady)
	s.expectAdmission("acme", "r2", docket.AdmissionQueued)

	// The woken yielded run is reacquired at the cap; the queued one waits.
	later := s.dbNow()
	res := s.claimDue(later, time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "r1" || res.Leases[0].Class != docket.ClassAdmittedReady {
		t.Fatalf("claim after yield: %+v", res)
	}
	after := s.row("r1")
	expectClaimed(t, after, res.Leases[0].ClaimToken, now)
	if after.Seq != lease.seq+1 || after.Unfinished != 2 {
		t.Fatalf("reacquired: %+v", after)
	}
	queued := s.row("r2")
	expectUnclaimed(t, queued)
	expectNoMarker(t, queued)
}

func TestRunStoreWokenUnmarkedRunStaysQueued(t *testing.T) {
	s := newRSStore(t, 1)
	s.insert("acme", "r1")
	s.insert("acme", "r2")
	lease := s.claim("acme", "r1")
	at := s.dbNow().Add(time.Hour)
	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{
		Holder: lease.holder, ExpectedSeq: lease.seq, Schedule: docket.ReleaseAt(at),
	}); err != nil {
		t.Fatalf("release at: %v", err)
	}
	// The freed slot goes to the queued head.
	promoted := s.claim("acme", "r2")

	// Past its wake time r1 is due but unadmitted: queued behind the cap.
	woken := at.Add(time.Minute)
	// (A day's TTL keeps r2's live claim out of the expired class.)
	if res := s.claimDue(woken, 24*time.Hour, 100); res.Outcomes() != 0 {
		t.Fatalf("claim at the cap: %+v", res)
	}
	r1 := s.row("r1")
	expectUnclaimed(t, r1)
	expectNoMarker(t, r1)
	if r1.WakeAt == nil || r1.WakeAt.After(woken) || r1.Status != "running" {
		t.Fatalf("r1: want running and due at %s, got %+v", woken, r1)
	}

	// Once r2 leaves, r1 is promoted with a fresh marker.
	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{
		Holder: promoted.holder, ExpectedSeq: promoted.seq, Schedule: docket.ReleaseTerminal(docket.StatusDone),
	}); err != nil {
		t.Fatalf("finish r2: %v", err)
	}
	again := s.claimAt("acme", "r1", woken)
	expectClaimed(t, s.row("r1"), again.holder.Token, woken)
}

func TestRunStoreDepartureLetsNextQueuedRunIn(t *testing.T) {
	s := newRSStore(t, 1)
	s.insert("acme", "r1")
	s.insert("acme", "r2")
	lease := s.claim("acme", "r1")

	if res := s.claimDue(s.dbNow(), time.Hour, 100); res.Outcomes() != 0 {
		t.Fatalf("claim at the cap: %+v", res)
	}
	queued := s.row("r2")
	expectUnclaimed(t, queued)
	expectNoMarker(t, queued)
	if queued.Unfinished != 2 {
		t.Fatalf("unfinished: %d", queued.Unfinished)
	}

	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{
		Holder: lease.holder, ExpectedSeq: lease.seq, Schedule: docket.ReleaseTerminal(docket.StatusFailed),
	}); err != nil {
		t.Fatalf("fail r1: %v", err)
	}
	now := s.dbNow()
	res := s.claimDue(now, time.Hour, 100)
	if len(res.Leases) != 1 || res.Leases[0].RunID != "r2" || res.Leases[0].Class != docket.ClassQueuedReady {
		t.Fatalf("claim after departure: %+v", res)
	}
	promoted := s.row("r2")
	expectClaimed(t, promoted, res.Leases[0].ClaimToken, now)
	if promoted.Attempts != 1 || promoted.Unfinished != 1 {
		t.Fatalf("promoted: %+v", promoted)
	}
}

func TestRunStoreClaimPoisonClearsMarker(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "r1")
	lease := s.claim("acme", "r1")
	if _, err := s.client.ReleaseClaim(testContext(t), lease.holder); err != nil {
		t.Fatalf("release: %v", err)
	}
	before := s.row("r1")
	if before.AdmittedAt == nil || before.Attempts != 1 {
		t.Fatalf("before: want admitted with one attempt, got %+v", before)
	}

	// The admitted run has used its one attempt: the claim call poisons it.
	now := s.dbNow()
	res := s.claimDue(now, time.Hour, 1)
	if len(res.Leases) != 0 || len(res.Poisoned) != 1 || res.Poisoned[0].RunID != "r1" {
		t.Fatalf("poison: %+v", res)
	}
	after := s.row("r1")
	expectUnclaimed(t, after)
	expectNoMarker(t, after)
	expectSameTime(t, "poisoned_at", after.PoisonedAt, now)
	if after.Status != "running" || after.WakeAt != nil || after.PoisonReason == nil ||
		*after.PoisonReason != "max_claim_attempts_exceeded" || after.Attempts != 1 || after.Unfinished != 1 {
		t.Fatalf("after: %+v", after)
	}
	s.expectAdmission("acme", "r1", docket.AdmissionInactive)

	// Retry makes it queued, and the next claim promotes it afresh.
	if _, err := s.client.RetryPoisonedRun(testContext(t), docket.Tenant("acme"), "r1"); err != nil {
		t.Fatalf("retry: %v", err)
	}
	s.expectAdmission("acme", "r1", docket.AdmissionQueued)
	later := s.dbNow()
	again := s.claimAt("acme", "r1", later)
	expectClaimed(t, s.row("r1"), again.holder.Token, later)
}
