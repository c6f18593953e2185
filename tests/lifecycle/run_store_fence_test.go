package lifecycle

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

func TestRunStoreCommitFence(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")

	stale := []struct {
		name string
		req  docket.CommitRequest
	}{
		{"other sequence", docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq + 1, Disposition: docket.RetainClaim()}},
		{"other token", docket.CommitRequest{
			Holder:      docket.Holder{Scope: lease.Holder.Scope, RunID: "r1", Token: uuid.New()},
			ExpectedSeq: lease.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone),
		}},
	}
	for _, tc := range stale {
		_, err := s.Client.Commit(testkit.Context(t), tc.req)
		testkit.ExpectErrorIs(t, tc.name, err, docket.ErrStaleFence)
		expectRowUnchanged(t, tc.name, before, s.Row("r1"))
	}

	// The right fence commits; the sequence it consumed is stale afterwards.
	run, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq, Disposition: docket.RetainClaim()})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	committed := s.Row("r1")
	_, err = s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq, Disposition: docket.RetainClaim()})
	testkit.ExpectErrorIs(t, "replayed sequence", err, docket.ErrStaleFence)
	expectRowUnchanged(t, "replayed sequence", committed, s.Row("r1"))
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: run.CheckpointSeq, Disposition: docket.RetainClaim()}); err != nil {
		t.Fatalf("commit at the returned sequence: %v", err)
	}
}

func TestRunStoreAbandonFence(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")

	for name, req := range map[string]docket.AbandonRequest{
		"other sequence": {Holder: lease.Holder, ExpectedSeq: lease.Seq + 1},
		"other token":    {Holder: docket.Holder{Scope: lease.Holder.Scope, RunID: "r1", Token: uuid.New()}, ExpectedSeq: lease.Seq},
	} {
		res, err := s.Client.AbandonClaim(testkit.Context(t), req)
		if err != nil || res.Outcome != docket.AbandonStale {
			t.Fatalf("%s: want stale, got %+v, err %v", name, res, err)
		}
		expectRowUnchanged(t, name, before, s.Row("r1"))
	}
	res, err := s.Client.AbandonClaim(testkit.Context(t), docket.AbandonRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq})
	if err != nil || res.Outcome != docket.AbandonRescheduled {
		t.Fatalf("abandon: %+v, err %v", res, err)
	}
}

func TestRunStoreRefreshOfLostClaim(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	if _, err := s.Client.ReleaseClaim(testkit.Context(t), lease.Holder); err != nil {
		t.Fatalf("release: %v", err)
	}
	released := s.Row("r1")
	_, err := s.Client.RefreshClaim(testkit.Context(t), lease.Holder)
	testkit.ExpectErrorIs(t, "refresh after release", err, docket.ErrClaimLost)
	expectRowUnchanged(t, "refresh after release", released, s.Row("r1"))
}

func TestRunStoreRolledBackInsertLeavesNothing(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	counts := s.TableCounts()

	tx, err := s.Pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := s.Client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{
		RunID: "r1", Scope: docket.Tenant("fresh"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`),
	}); err != nil {
		t.Fatalf("insert in tx: %v", err)
	}
	// Inside the transaction the partition and its ring position exist.
	var partitions, unfinished int64
	if err := tx.QueryRow(testkit.Context(t), `
		select count(*), coalesce(sum(s.unfinished_count), -1)
		  from docket_claim_partitions p join docket_claim_schedule s using (scope_key)
		 where p.scope_key = 'fresh'`).Scan(&partitions, &unfinished); err != nil {
		t.Fatalf("read in tx: %v", err)
	}
	if partitions != 1 || unfinished != 1 {
		t.Fatalf("in tx: want 1 partition with unfinished 1, got %d and %d", partitions, unfinished)
	}
	if err := tx.Rollback(testkit.Context(t)); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if got := s.TableCounts(); got != counts {
		t.Fatalf("after rollback: table counts %v, want %v", got, counts)
	}
	_, err = s.Client.FetchRun(testkit.Context(t), docket.Tenant("fresh"), "r1")
	testkit.ExpectErrorIs(t, "fetch after rollback", err, docket.ErrNotFound)
}

func TestRunStoreInsertTxWithCallerWrites(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "existing")
	testkit.ExecSQL(t, s.Pool, `create table app_orders (id text primary key)`)

	tx, err := s.Pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback(testkit.Context(t)) }()
	if _, err := tx.Exec(testkit.Context(t), `insert into app_orders values ('o1')`); err != nil {
		t.Fatalf("app write: %v", err)
	}
	// A duplicate run id is reported and leaves the transaction usable.
	_, err = s.Client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{
		RunID: "existing", Scope: docket.Tenant("acme"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`),
	})
	testkit.ExpectErrorIs(t, "duplicate in tx", err, docket.ErrDuplicateRun)
	if _, err := s.Client.InsertRunTx(testkit.Context(t), tx, docket.NewRun{
		RunID: "order-o1", Scope: docket.Tenant("shop"), GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`),
	}); err != nil {
		t.Fatalf("insert after duplicate: %v", err)
	}
	if err := tx.Commit(testkit.Context(t)); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if n := testkit.QueryInt64(t, s.Pool, `select count(*) from app_orders`); n != 1 {
		t.Fatalf("app rows: %d", n)
	}
	r := s.Row("order-o1")
	if r.Status != "running" || r.Unfinished != 1 || r.WakeAt == nil || r.AdmittedAt != nil {
		t.Fatalf("committed run: %+v", r)
	}
}

func TestRunStoreRolledBackMutationChangesNothing(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "r1")
	lease := s.Claim("acme", "r1")
	before := s.Row("r1")
	expectClaimed(t, before, lease.Holder.Token, *before.AdmittedAt)

	refuse := errors.New("refused by the application")
	_, err := s.Client.MutateRun(testkit.Context(t), docket.Tenant("acme"), "r1", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{}, refuse
	})
	testkit.ExpectErrorIs(t, "refused decision", err, refuse)
	expectRowUnchanged(t, "refused decision", before, s.Row("r1"))

	// An invalid decision rolls back too: the claim and marker survive.
	_, err = s.Client.MutateRun(testkit.Context(t), docket.Tenant("acme"), "r1", func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusWaiting, WakeAt: before.UpdatedAt}, nil
	})
	testkit.ExpectErrorIs(t, "invalid decision", err, docket.ErrInvalidArgument)
	expectRowUnchanged(t, "invalid decision", before, s.Row("r1"))
}

func TestRunStoreMutateRefusesFinishedAndPoisonedRevival(t *testing.T) {
	s := testkit.NewRunStore(t, 2)
	s.Insert("acme", "done")
	s.Insert("acme", "poisoned")
	done := s.Claim("acme", "done")
	if _, err := s.Client.Commit(testkit.Context(t), docket.CommitRequest{Holder: done.Holder, ExpectedSeq: done.Seq, Disposition: docket.ReleaseTerminal(docket.StatusDone)}); err != nil {
		t.Fatalf("finish: %v", err)
	}
	poisoned := s.Claim("acme", "poisoned")
	if res, err := s.Client.AbandonClaim(testkit.Context(t), docket.AbandonRequest{Holder: poisoned.Holder, ExpectedSeq: poisoned.Seq, MaxAbandons: 1}); err != nil || res.Outcome != docket.AbandonPoisoned {
		t.Fatalf("poison: %+v, %v", res, err)
	}
	running := func(docket.Run) (docket.Mutation, error) { return docket.Mutation{Status: docket.StatusRunning}, nil }
	for _, runID := range []string{"done", "poisoned"} {
		before := s.Row(runID)
		_, err := s.Client.MutateRun(testkit.Context(t), docket.Tenant("acme"), runID, running)
		testkit.ExpectErrorIs(t, "revive "+runID, err, docket.ErrInvalidTransition)
		expectRowUnchanged(t, "revive "+runID, before, s.Row(runID))
	}
	// A poisoned run may still be finished.
	res, err := s.Client.Cancel(testkit.Context(t), docket.Tenant("acme"), "poisoned")
	if err != nil || !res.Changed {
		t.Fatalf("cancel poisoned: %+v, %v", res, err)
	}
	after := s.Row("poisoned")
	if after.Status != "cancelled" || after.PoisonedAt != nil || after.PoisonReason != nil || after.Unfinished != 0 {
		t.Fatalf("cancelled poisoned run: %+v", after)
	}
}
