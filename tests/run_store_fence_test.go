package tests

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/docket"
)

func TestRunStoreCommitFence(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "r1")
	lease := s.claim("acme", "r1")
	before := s.row("r1")

	stale := []struct {
		name string
		req  docket.CommitRequest
	}{
		{"other sequence", docket.CommitRequest{Holder: lease.holder, ExpectedSeq: lease.seq + 1, Schedule: docket.RetainClaim()}},
		{"other token", docket.CommitRequest{
			Holder:      docket.Holder{Scope: lease.holder.Scope, RunID: "r1", Token: uuid.New()},
			ExpectedSeq: lease.seq, Schedule: docket.ReleaseTerminal(docket.StatusDone),
		}},
	}
	for _, tc := range stale {
		_, err := s.client.Commit(testContext(t), tc.req)
		expectErrorIs(t, tc.name, err, docket.ErrStaleFence)
		expectRowUnchanged(t, tc.name, before, s.row("r1"))
	}

	// The right fence commits; the sequence it consumed is stale afterwards.
	run, err := s.client.Commit(testContext(t), docket.CommitRequest{Holder: lease.holder, ExpectedSeq: lease.seq, Schedule: docket.RetainClaim()})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed := s.row("r1")
	_, err = s.client.Commit(testContext(t), docket.CommitRequest{Holder: lease.holder, ExpectedSeq: lease.seq, Schedule: docket.RetainClaim()})
	expectErrorIs(t, "replayed sequence", err, docket.ErrStaleFence)
	expectRowUnchanged(t, "replayed sequence", committed, s.row("r1"))
	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{Holder: lease.holder, ExpectedSeq: run.CheckpointSeq, Schedule: docket.RetainClaim()}); err != nil {
		t.Fatalf("commit at the returned sequence: %v", err)
	}
}

func TestRunStoreAbandonFence(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "r1")
	lease := s.claim("acme", "r1")
	before := s.row("r1")

	for name, req := range map[string]docket.AbandonRequest{
		"other sequence": {Holder: lease.holder, ExpectedSeq: lease.seq + 1},
		"other token":    {Holder: docket.Holder{Scope: lease.holder.Scope, RunID: "r1", Token: uuid.New()}, ExpectedSeq: lease.seq},
	} {
		res, err := s.client.AbandonClaim(testContext(t), req)
		if err != nil || res.Outcome != docket.AbandonStale {
			t.Fatalf("%s: want stale, got %+v, err %v", name, res, err)
		}
		expectRowUnchanged(t, name, before, s.row("r1"))
	}
	res, err := s.client.AbandonClaim(testContext(t), docket.AbandonRequest{Holder: lease.holder, ExpectedSeq: lease.seq})
	if err != nil || res.Outcome != docket.AbandonRescheduled {
		t.Fatalf("abandon: %+v, err %v", res, err)
	}
}

func TestRunStoreRefreshOfLostClaim(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "r1")
	lease := s.claim("acme", "r1")
	if _, err := s.client.ReleaseClaim(testContext(t), lease.holder); err != nil {
		t.Fatalf("release: %v", err)
	}
	released := s.row("r1")
	_, err := s.client.RefreshClaim(testContext(t), lease.holder)
	expectErrorIs(t, "refresh after release", err, docket.ErrClaimLost)
	expectRowUnchanged(t, "refresh after release", released, s.row("r1"))
}

func TestRunStoreRolledBackInsertLeavesNothing(t *testing.T) {
	s := newRSStore(t, 2)
	counts := s.tableCounts()

	tx, err := s.pool.Begin(testContext(t))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := s.client.InsertRunTx(testContext(t), tx, docket.NewRun{
		RunID: "r1", Scope: docket.Tenant("fresh"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`),
	}); err != nil {
		t.Fatalf("insert in tx: %v", err)
	}
	// Inside the transaction the partition and its ring position exist.
	var partitions, unfinished int64
	if err := tx.QueryRow(testContext(t), `
		select count(*), coalesce(sum(s.unfinished_count), -1)
		  from docket_claim_partitions p join docket_claim_schedule s using (scope_key)
		 where p.scope_key = 'fresh'`).Scan(&partitions, &unfinished); err != nil {
		t.Fatalf("read in tx: %v", err)
	}
	if partitions != 1 || unfinished != 1 {
		t.Fatalf("in tx: want 1 partition with unfinished 1, got %d and %d", partitions, unfinished)
	}
	if err := tx.Rollback(testContext(t)); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := s.tableCounts(); got != counts {
		t.Fatalf("after rollback: table counts %v, want %v", got, counts)
	}
	_, err = s.client.FetchRun(testContext(t), docket.Tenant("fresh"), "r1")
	expectErrorIs(t, "fetch after rollback", err, docket.ErrNotFound)
}

func TestRunStoreInsertTxWithCallerWrites(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "existing")
	execSQL(t, s.pool, `create table app_orders (id text primary key)`)

	tx, err := s.pool.Begin(testContext(t))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback(testContext(t)) }()
	if _, err := tx.Exec(testContext(t), `insert into app_orders values ('o1')`); err != nil {
		t.Fatalf("app write: %v", err)
	}
	// A duplicate run id is reported and leaves the transaction usable.
	_, err = s.client.InsertRunTx(testContext(t), tx, docket.NewRun{
		RunID: "existing", Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`),
	})
	expectErrorIs(t, "duplicate in tx", err, docket.ErrDuplicateRun)
	if _, err := s.client.InsertRunTx(testContext(t), tx, docket.NewRun{
		RunID: "order-o1", Scope: docket.Tenant("shop"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`),
	}); err != nil {
		t.Fatalf("insert after duplicate: %v", err)
	}
	if err := tx.Commit(testContext(t)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if n := queryInt64(t, s.pool, `select count(*) from app_orders`); n != 1 {
		t.Fatalf("app rows: %d", n)
	}
	r := s.row("order-o1")
	if r.Status != "running" || r.Unfinished != 1 || r.WakeAt == nil || r.AdmittedAt != nil {
		t.Fatalf("committed run: %+v", r)
	}
}

func TestRunStoreRolledBackMutationChangesNothing(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "r1")
	lease := s.claim("acme", "r1")
	before := s.row("r1")
	expectClaimed(t, before, lease.holder.Token, *before.AdmittedAt)

	refuse := errors.New("refused by the application")
	_, err := s.client.MutateRun(testContext(t), docket.Tenant("acme"), "r1", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{}, refuse
	})
	expectErrorIs(t, "refused decision", err, refuse)
	expectRowUnchanged(t, "refused decision", before, s.row("r1"))

	// An invalid decision rolls back too: the claim and marker survive.
	_, err = s.client.MutateRun(testContext(t), docket.Tenant("acme"), "r1", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusWaiting, WakeAt: before.UpdatedAt}, nil
	})
	expectErrorIs(t, "invalid decision", err, docket.ErrInvalidArgument)
	expectRowUnchanged(t, "invalid decision", before, s.row("r1"))
}

func TestRunStoreMutateRefusesFinishedAndPoisonedRevival(t *testing.T) {
	s := newRSStore(t, 2)
	s.insert("acme", "done")
	s.insert("acme", "poisoned")
	done := s.claim("acme", "done")
	if _, err := s.client.Commit(testContext(t), docket.CommitRequest{Holder: done.holder, ExpectedSeq: done.seq, Schedule: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	poisoned := s.claim("acme", "poisoned")
	if res, err := s.client.AbandonClaim(testContext(t), docket.AbandonRequest{Holder: poisoned.holder, ExpectedSeq: poisoned.seq, MaxAbandons: 1}); err != nil || res.Outcome != docket.AbandonPoisoned {
		t.Fatalf("poison: %+v, %v", res, err)
	}
	running := func(docket.Run) (docket.Mutation, error) { return docket.Mutation{Status: docket.StatusRunning}, nil }
	for _, runID := range []string{"done", "poisoned"} {
		before := s.row(runID)
		_, err := s.client.MutateRun(testContext(t), docket.Tenant("acme"), runID, running)
		expectErrorIs(t, "revive "+runID, err, docket.ErrInvalidTransition)
		expectRowUnchanged(t, "revive "+runID, before, s.row(runID))
	}
	// A poisoned run may still be finished.
	res, err := s.client.Cancel(testContext(t), docket.Tenant("acme"), "poisoned")
	if err != nil || !res.Changed {
		t.Fatalf("cancel poisoned: %+v, %v", res, err)
	}
	after := s.row("poisoned")
	if after.Status != "cancelled" || after.PoisonedAt != nil || after.PoisonReason != nil || after.Unfinished != 0 {
		t.Fatalf("cancelled poisoned run: %+v", after)
	}
}
