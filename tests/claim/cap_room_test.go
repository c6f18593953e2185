package claim

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Lease.CapRoom: the room under the lease's tenant's cap after every grant
// of the claim call, or nil where no cap binds.

// capRooms renders each lease of res as its run id and room ("-" for nil).
func capRooms(res docket.ClaimResult) []string {
	out := make([]string, len(res.Leases))
	for i, l := range res.Leases {
		room := "-"
		if l.CapRoom != nil {
			room = fmt.Sprint(*l.CapRoom)
		}
		out[i] = l.RunID + "=" + room
	}
	return out
}

// expectCapRooms fails the test unless res leased exactly want (run=room).
func expectCapRooms(t *testing.T, what string, res docket.ClaimResult, want ...string) {
	t.Helper()
	if got := capRooms(res); !slices.Equal(got, want) {
		t.Fatalf("%s: leases %v, want %v", what, got, want)
	}
}

// claimDue is ClaimDue at the claim tests' clock with demand limit.
func claimDue(t *testing.T, client *docket.Client, limit int) docket.ClaimResult {
	t.Helper()
	res, err := client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, limit, docket.PreferNone))
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return res
}

// claimDueTx is ClaimDueTx at the claim tests' clock with demand limit, in a
// transaction of its own that it commits.
func claimDueTx(t *testing.T, e *testkit.ClaimEnv, limit int) docket.ClaimResult {
	t.Helper()
	ctx := testkit.Context(t)
	tx, err := e.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	res, err := e.Client.ClaimDueTx(ctx, tx, testkit.ClaimReq(testkit.ClaimBase, limit, docket.PreferNone))
	if err != nil {
		t.Fatalf("claim in a transaction: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return res
}

// A tenant with five due runs under a cap of three: two leases leave room
// for one more, the next call leases that one and reports no room; the
// trace and the transaction's claim report the same.
func TestCapRoomIsTheCapLessTheAdmittedRunsAfterTheCall(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 3)
	ids := e.DueMany("t", "t", 5, testkit.ClaimBase.Add(-time.Hour))

	expectCapRooms(t, "first call", claimDue(t, e.Client, 2), ids[0]+"=1", ids[1]+"=1")
	expectCapRooms(t, "second call", claimDueTx(t, e, 2), ids[2]+"=0")
	if n := e.Admitted("t"); n != 3 {
		t.Fatalf("admitted = %d, want 3", n)
	}

	// A released admission is reacquired at the cap: still no room.
	e.Release(ids[0], testkit.ClaimBase)
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	expectCapRooms(t, "reacquisition", tr.Result, ids[0]+"=0")

	// A finished admission frees its slot for the FIFO head.
	e.Finish(ids[0])
	expectCapRooms(t, "after one finished", claimDue(t, e.Client, 1), ids[3]+"=0")
	// Three unfinished runs under a cap of three: all of them fit under it
	// at once, so it binds no more.
	e.Finish(ids[1])
	expectCapRooms(t, "no more unfinished runs than the cap", claimDue(t, e.Client, 1), ids[4]+"=-")
}

// A call whose demand exceeds one grant's Q visits the tenant again after a
// wrap: every lease, the first grant's too, reports the room after both.
func TestCapRoomCountsEveryGrantOfTheCall(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("t", "t", 15, testkit.ClaimBase.Add(-time.Hour))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 12, docket.PreferNone))
	if got := dispositions(tr); len(got) < 2 || got[0] != policy.DispositionGrant || got[1] != policy.DispositionGrant {
		t.Fatalf("dispositions = %v, want two grants of the one tenant first", got)
	}
	var want []string
	for _, id := range ids[:10] {
		want = append(want, id+"=0")
	}
	expectCapRooms(t, "two grants", tr.Result, want...)
}

// The cap is the tenant's override, else the domain default; a tenant with
// no more unfinished runs than its cap has no binding cap (nil), however
// many of them the call leased, and so has a tenant of a huge cap.
func TestCapRoomOfTheDefaultCapAndOfAnOverride(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 3)
	a := e.DueMany("a", "a", 5, testkit.ClaimBase.Add(-time.Hour))
	b := e.DueMany("b", "b", 7, testkit.ClaimBase.Add(-time.Hour))
	c := e.DueMany("c", "c", 2, testkit.ClaimBase.Add(-time.Hour))
	e.SetOverride("b", 5)

	expectCapRooms(t, "the default cap and an override", claimDue(t, e.Client, 4),
		a[0]+"=0", a[1]+"=0", a[2]+"=0", b[0]+"=4")
	expectCapRooms(t, "no more unfinished runs than the cap", claimDue(t, e.Client, 2), c[0]+"=-", c[1]+"=-")

	e.SetOverride("a", 4)
	expectCapRooms(t, "a raised override", claimDue(t, e.Client, 2), a[3]+"=0", b[1]+"=3")

	big := testkit.NewClaimTenantFair(t, math.MaxInt32)
	ids := big.DueMany("t", "t", 3, testkit.ClaimBase.Add(-time.Hour))
	expectCapRooms(t, "huge cap", claimDue(t, big.Client, 2), ids[0]+"=-", ids[1]+"=-")
}

// Legacy has no caps: its leases carry no room, in both of its claim paths.
func TestCapRoomIsNilUnderLegacy(t *testing.T) {
	e := testkit.NewClaimLegacy(t)
	ids := e.DueMany("", "r", 3, testkit.ClaimBase.Add(-time.Hour))
	expectCapRooms(t, "ClaimDue", claimDue(t, e.Client, 2), ids[0]+"=-", ids[1]+"=-")
	expectCapRooms(t, "ClaimDueTx", claimDueTx(t, e, 2), ids[2]+"=-")
}

// A waiter served by a combined claim gets the room after the whole walk,
// the combiner's own lease counted.
func TestCapRoomOfACombinedClaimWaiter(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 3)
	ids := e.DueMany("t", "r", 5, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(3))
	c := newCombiner(t, e)
	answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	own := c.claim(testkit.ClaimBase, 1)
	r := c.commitFor(answer)
	testkit.ClaimExpectIDs(t, "combiner", own, ids[2:3])
	expectCapRooms(t, "waiter", r.res, ids[0]+"=0", ids[1]+"=0")
}

// Under Config.Schema the facade's claim batch and ClaimDueTx report the
// same rooms.
func TestCapRoomUnderConfigSchema(t *testing.T) {
	const schema = "cap_room_domain"
	url := pgtest.NewEmptyDatabase(t)
	testkit.MigrateOrFail(t, url, testkit.MigrateCall{Schema: schema})
	cfg := testkit.TenantFairConfig(3)
	cfg.Schema = schema
	e := &testkit.ClaimEnv{T: t, Pool: testkit.PoolFor(t, url)}
	e.Client = testkit.OpenClient(t, e.Pool, cfg)
	ctx := testkit.Context(t)
	var ids []string
	for i := range 5 {
		id := fmt.Sprintf("s-%d", i+1)
		wake := testkit.ClaimBase.Add(time.Duration(i-10) * time.Minute)
		if _, err := e.Client.InsertRun(ctx, docket.NewRun{RunID: id, Scope: docket.Tenant("t"), GraphID: "g",
			GraphHash: "h", State: json.RawMessage(`{}`), WakeAt: wake}); err != nil {
			t.Fatalf("insert %s: %v", id, err)
		}
		ids = append(ids, id)
	}
	expectCapRooms(t, "ClaimDue", claimDue(t, e.Client, 2), ids[0]+"=1", ids[1]+"=1")
	expectCapRooms(t, "ClaimDueTx", claimDueTx(t, e, 2), ids[2]+"=0")
}
