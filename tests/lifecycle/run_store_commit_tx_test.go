package lifecycle

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// CommitTx commits a holder's checkpoint with the app's own writes: a
// rolled-back transaction leaves the run exactly as it was, still claimed
// by the same holder with the same fence, which can then commit again; a
// committed one lands both; a stale holder is refused inside the
// transaction, which stays usable.
func TestCommitTxFollowsTheAppsTransaction(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.ExecSQL(t, pool, `create table invoices (id bigint primary key)`)
	rs := &testkit.RunStore{T: t, Pool: pool, Client: testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))}
	rs.Insert("acme", "inv-1")
	lease := rs.Claim("acme", "inv-1")
	before := rs.Row("inv-1")
	req := docket.CommitRequest{Holder: lease.Holder, ExpectedSeq: lease.Seq, Step: 1,
		State: json.RawMessage(`{"sent": true}`), Disposition: docket.ReleaseTerminal(docket.StatusDone)}

	tx, err := pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(testkit.Context(t), `insert into invoices values (1)`); err != nil {
		t.Fatal(err)
	}
	if run, err := rs.Client.CommitTx(testkit.Context(t), tx, req); err != nil || run.Status != docket.StatusDone {
		t.Fatalf("CommitTx: %+v, %v", run, err)
	}
	if err := tx.Rollback(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, rs.Row("inv-1")); diff != "" {
		t.Fatalf("a rolled-back CommitTx changed the run (-before +after):\n%s", diff)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from invoices`); got != 0 {
		t.Fatalf("%d invoices after the rollback", got)
	}

	tx, err = pool.Begin(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(testkit.Context(t), `insert into invoices values (1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Client.CommitTx(testkit.Context(t), tx, req); err != nil {
		t.Fatalf("CommitTx with the unchanged fence: %v", err)
	}
	stale := req
	stale.ExpectedSeq = lease.Seq + 1
	if _, err := rs.Client.CommitTx(testkit.Context(t), tx, stale); !errors.Is(err, docket.ErrStaleFence) {
		t.Fatalf("a second commit of the same claim in the transaction: %v, want ErrStaleFence", err)
	}
	if err := tx.Commit(testkit.Context(t)); err != nil {
		t.Fatalf("the transaction after a refused CommitTx: %v", err)
	}
	if r := rs.Row("inv-1"); r.Status != "done" || r.Seq != lease.Seq+1 || r.Token != nil {
		t.Fatalf("after the commit: %+v", r)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from invoices`); got != 1 {
		t.Fatalf("%d invoices after the commit, want 1", got)
	}
	if _, err := rs.Client.CommitTx(testkit.Context(t), nil, req); !errors.Is(err, docket.ErrInvalidArgument) {
		t.Fatalf("CommitTx with a nil transaction: %v", err)
	}
}
