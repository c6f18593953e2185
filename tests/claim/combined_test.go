package claim

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// combiner is a transaction on a connection of its own that made a
// combined claim call and so holds the domain's combiner lock until it
// ends; every further call in it serves the callers waiting for it.
type combiner struct {
	t  *testing.T
	tx pgx.Tx
}

// newCombiner makes a combined call in a new transaction at a time when
// nothing is due, so it leases nothing and only takes the combiner lock.
func newCombiner(t *testing.T, e *testkit.ClaimEnv) *combiner {
	t.Helper()
	c := beginCombiner(t, e)
	if got := c.claim(testkit.ClaimBase.Add(-24*time.Hour), 1); len(got) != 0 {
		t.Fatalf("the combiner's first call leased %v, want nothing", got)
	}
	return c
}

// beginCombiner opens a transaction on a connection of its own, which
// becomes a combiner once it holds the combiner lock.
func beginCombiner(t *testing.T, e *testkit.ClaimEnv) *combiner {
	t.Helper()
	ctx := testkit.Context(t)
	conn, err := pgx.ConnectConfig(ctx, e.Pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &combiner{t: t, tx: tx}
}

// pid is the server process of c's connection.
func (c *combiner) pid() uint32 { return c.tx.Conn().PgConn().PID() }

// lockKey is the combiner lock c holds, as the server lists it: the key
// is read from pg_locks, not computed as the function computes it.
func (c *combiner) lockKey() int64 {
	c.t.Helper()
	var key int64
	err := c.tx.QueryRow(testkit.Context(c.t), `select (l.classid::bigint << 32) | l.objid::bigint
		  from pg_locks l
		 where l.locktype = 'advisory' and l.pid = pg_backend_pid() and l.granted and l.mode = 'ExclusiveLock'`).Scan(&key)
	if err != nil {
		c.t.Fatalf("read the combiner lock: %v", err)
	}
	return key
}

// queue makes c wait for the combiner lock key in exclusive mode, as a
// caller queued to become the next combiner does; the returned channel
// receives the wait's end.
func (c *combiner) queue(key int64) <-chan error {
	locked := make(chan error, 1)
	go func() {
		_, err := c.tx.Exec(testkit.Context(c.t), `select pg_advisory_xact_lock($1)`, key)
		locked <- err
	}()
	return locked
}

// awaitLockWait returns once a session waits for an advisory lock in mode
// (ShareLock or ExclusiveLock); pid, when not zero, names the session.
func awaitLockWait(t *testing.T, pool *pgxpool.Pool, mode string, pid uint32) {
	t.Helper()
	cond := fmt.Sprintf(`exists (select from pg_locks l
		 where l.locktype = 'advisory' and not l.granted and l.mode = '%s' and (%d = 0 or l.pid = %d)
		   and l.database = (select d.oid from pg_database d where d.datname = current_database()))`, mode, pid, pid)
	if err := testkit.AwaitActivity(testkit.Context(t), pool, cond, testkit.WorkerDeadline); err != nil {
		t.Fatalf("no session waits for the combiner lock in %s: %v", mode, err)
	}
}

// claim makes a combined call of demand at now with the tests' TTL and
// attempts and returns the run ids it leased, in order.
func (c *combiner) claim(now time.Time, demand int) []string {
	c.t.Helper()
	rows, err := c.tx.Query(testkit.Context(c.t), `select c.row_kind, c.run_id
		  from docket_tenant_fair_claim_combined($1, $2, $3, $4, null) as c
		 order by c.outcome_ordinal`, now, now.Add(-testkit.ClaimTTL), demand, testkit.ClaimMaxAttempts)
	if err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var kind string
		var id *string
		if err := rows.Scan(&kind, &id); err != nil {
			c.t.Fatal(err)
		}
		if kind != "outcome" || id == nil {
			c.t.Fatalf("combiner row %s %v, want outcomes only", kind, id)
		}
		ids = append(ids, *id)
	}
	if err := rows.Err(); err != nil {
		c.t.Fatal(err)
	}
	return ids
}

// demandTwoCall is a combined call of demand two at the tests' claim time,
// TTL and attempts (demandTwoArgs): each row's kind and run id.
const demandTwoCall = `select c.row_kind, c.run_id
	  from docket_tenant_fair_claim_combined($1, $2, 2, $3, null) as c
	 order by c.outcome_ordinal`

// demandTwoArgs are demandTwoCall's arguments.
var demandTwoArgs = []any{testkit.ClaimBase, testkit.ClaimBase.Add(-testkit.ClaimTTL), testkit.ClaimMaxAttempts}

// demandTwo starts demandTwoCall in c's transaction and returns the
// channel of the run ids it returns; a failed call fails the test.
func (c *combiner) demandTwo(ctx context.Context) <-chan []string {
	collected := make(chan []string, 1)
	go func() {
		rows, err := c.tx.Query(ctx, demandTwoCall, demandTwoArgs...)
		var ids []string
		if err == nil {
			ids, err = demandTwoRuns(rows)
		}
		if err != nil {
			c.t.Errorf("demand-two call: %v", err)
		}
		collected <- ids
	}()
	return collected
}

// demandTwoRuns collects the run ids of demandTwoCall's rows, in order; a
// row without a run fails.
func demandTwoRuns(rows pgx.Rows) ([]string, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		var kind string
		var run *string
		if err := r.Scan(&kind, &run); err != nil || run == nil {
			return "", errors.Join(err, fmt.Errorf("row %s without a run", kind))
		}
		return *run, nil
	})
}

// commitFor commits c and returns the answer of the waiting claim it
// served, failing the test if either failed.
func (c *combiner) commitFor(answer <-chan claimResult) claimResult {
	c.t.Helper()
	if err := c.tx.Commit(testkit.Context(c.t)); err != nil {
		c.t.Fatal(err)
	}
	r := <-answer
	if r.err != nil {
		c.t.Fatalf("waiter: %v", r.err)
	}
	return r
}

// claimResult is one ClaimDue call's answer.
type claimResult struct {
	res docket.ClaimResult
	err error
}

// waitingClaim starts ClaimDue on client, waits until the call waits for
// a combiner with its demand announced, and returns the channel of its
// answer.
func waitingClaim(ctx context.Context, t *testing.T, pool *pgxpool.Pool, client *docket.Client, req docket.ClaimRequest) <-chan claimResult {
	t.Helper()
	answer := make(chan claimResult, 1)
	go func() {
		res, err := client.ClaimDue(ctx, req)
		answer <- claimResult{res, err}
	}()
	if err := testkit.AwaitCombinedWaiter(testkit.Context(t), pool); err != nil {
		t.Fatalf("the claim does not wait for the combiner: %v", err)
	}
	return answer
}

// expectNoDeliveries fails the test unless the domain on pool holds no
// delivery at the moment when says.
func expectNoDeliveries(t *testing.T, pool *pgxpool.Pool, when string) {
	t.Helper()
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_deliveries`); n != 0 {
		t.Fatalf("%d deliveries left %s, want 0", n, when)
	}
}

// tombstones counts the tombstones in the domain on pool: the empty
// deliveries that waiters who gave up left for their own tickets. It fails
// the test if any other delivery is left.
func tombstones(t *testing.T, pool *pgxpool.Pool, when string) int64 {
	t.Helper()
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_deliveries where cardinality(outcomes) > 0`); n != 0 {
		t.Fatalf("%d deliveries with outcomes left %s, want 0", n, when)
	}
	return testkit.QueryInt64(t, pool, `select count(*) from docket_claim_deliveries`)
}

// expectMarkers fails the test unless want combined calls wait for a
// combiner with their demand announced, at the moment when says.
func expectMarkers(t *testing.T, pool *pgxpool.Pool, want int64, when string) {
	t.Helper()
	if n := testkit.CombinedMarkers(t, pool); n != want {
		t.Fatalf("%d markers %s, want %d", n, when, want)
	}
}

// leasedIDs are the run ids of res's leases in order.
func leasedIDs(res docket.ClaimResult) []string {
	var ids []string
	for _, l := range res.Leases {
		ids = append(ids, l.RunID)
	}
	return ids
}

// A call that finds a combiner at work announces its demand and waits in
// the same call; the combiner's next call walks once for both demands, the
// waiter first, and the waiter collects its leases at the combiner's
// commit. Every lease is the run's live claim, and no delivery is left
// behind.
func TestCombinedClaimServesTheWaiterFirst(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
	c := newCombiner(t, e)
	answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	expectMarkers(t, e.Pool, 1, "while the waiter waits")
	own := c.claim(testkit.ClaimBase, 1)
	if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_claim_deliveries`); n != 0 {
		t.Fatalf("%d deliveries visible before the combiner's commit, want 0", n)
	}
	r := c.commitFor(answer)
	testkit.ClaimExpectIDs(t, "waiter", leasedIDs(r.res), ids[:2])
	testkit.ClaimExpectIDs(t, "combiner", own, ids[2:])
	for _, l := range r.res.Leases {
		if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_runs where run_id = $1 and claim_token = $2`,
			l.RunID, l.ClaimToken); n != 1 {
			t.Fatalf("run %s does not hold the claim %v the waiter was given", l.RunID, l.ClaimToken)
		}
	}
	expectNoDeliveries(t, e.Pool, "after the waiter collected")
	expectMarkers(t, e.Pool, 0, "after the waiter collected")
}

// ticketsRead is the ticket value the last read of the markers recorded.
func ticketsRead(t *testing.T, pool *pgxpool.Pool) int64 {
	t.Helper()
	return testkit.QueryInt64(t, pool, `select last_value from docket_claim_tickets_read`)
}

// A combiner reads the markers in pg_locks only when a ticket was taken
// since the last read, and records the ticket it read them at: calls that
// never waited leave the record as it was, and the walk that serves the
// first waiter records that waiter's ticket.
func TestCombinedClaimReadsMarkersOnlyAfterANewTicket(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 4, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
	res, err := client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if err != nil {
		t.Fatal(err)
	}
	testkit.ClaimExpectIDs(t, "uncontended call", leasedIDs(res), ids[:1])
	if got := ticketsRead(t, e.Pool); got != 0 {
		t.Fatalf("markers read at ticket %d after an uncontended call, want no read (0)", got)
	}
	c := newCombiner(t, e)
	answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	ticket := testkit.QueryInt64(t, e.Pool, `select last_value from docket_claim_tickets`)
	testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 1), ids[3:])
	if got := ticketsRead(t, e.Pool); got != ticket {
		t.Fatalf("markers read at ticket %d, want the waiter's %d", got, ticket)
	}
	r := c.commitFor(answer)
	testkit.ClaimExpectIDs(t, "waiter", leasedIDs(r.res), ids[1:3])
}

// A waiter that announced after its combiner read the markers is not
// served at that combiner's commit. When another caller already holds or
// awaits the combiner lock, the waiter waits for that one's commit in
// shared mode again, instead of queueing for the lock itself: the next
// combiner reads its marker and serves it, and the waiter collects at that
// commit.
func TestCombinedClaimUnservedWaiterWaitsForTheNextCombiner(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
	first := newCombiner(t, e)
	next := beginCombiner(t, e)
	key := first.lockKey()
	testkit.ClaimExpectIDs(t, "first combiner", first.claim(testkit.ClaimBase, 1), ids[:1])
	answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	locked := next.queue(key)
	awaitLockWait(t, e.Pool, "ExclusiveLock", next.pid())
	if err := first.tx.Commit(testkit.Context(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("next combiner: %v", err)
	}
	if err := testkit.AwaitCombinedWaiter(testkit.Context(t), e.Pool); err != nil {
		t.Fatalf("the unserved waiter does not wait for the next combiner: %v", err)
	}
	testkit.ClaimExpectIDs(t, "next combiner", next.claim(testkit.ClaimBase, 1), nil)
	r := next.commitFor(answer)
	testkit.ClaimExpectIDs(t, "waiter", leasedIDs(r.res), ids[1:])
	expectNoDeliveries(t, e.Pool, "after the waiter collected")
}

// A call that collects what a combiner served it commits without waiting
// for its WAL flush: it only deletes its delivery, and the leases are the
// combiner's, durable with the combiner's commit. The combiner, whose
// commit writes leases, keeps the caller's setting.
func TestCombinedClaimCollectCommitsAsynchronously(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	c := newCombiner(t, e)
	waiter := beginCombiner(t, e)
	ctx := testkit.Context(t)
	for _, tx := range []pgx.Tx{c.tx, waiter.tx} {
		if _, err := tx.Exec(ctx, `set local synchronous_commit = on`); err != nil {
			t.Fatal(err)
		}
	}
	collected := waiter.demandTwo(ctx)
	awaitLockWait(t, e.Pool, "ShareLock", waiter.pid())
	testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 1), ids[2:])
	expectSynchronousCommit(t, c.tx, "on", "the combiner")
	if err := c.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.ClaimExpectIDs(t, "waiter", <-collected, ids[:2])
	expectSynchronousCommit(t, waiter.tx, "off", "the collecting waiter")
	if err := waiter.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	expectNoDeliveries(t, e.Pool, "after the waiter collected")
}

// expectSynchronousCommit fails the test unless tx's synchronous_commit is
// want.
func expectSynchronousCommit(t *testing.T, tx pgx.Tx, want, whose string) {
	t.Helper()
	var got string
	if err := tx.QueryRow(testkit.Context(t), `select current_setting('synchronous_commit')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("synchronous_commit of %s = %s, want %s", whose, got, want)
	}
}

// A waiter whose combiner outlasts the lock wait, a combiner that never
// read its marker, gets lock_contention: it takes its ticket's served
// lock, finds no delivery and leaves its tombstone. Nothing was claimed
// for it, and the combiner's next call finds no marker to serve.
func TestCombinedClaimWaitEndsInLockContention(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
	c := newCombiner(t, e)
	_, err := client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	testkit.ClaimExpectUnavailable(t, err, policy.ReasonLockContention)
	expectMarkers(t, e.Pool, 0, "after the timeout")
	ticket := testkit.QueryInt64(t, e.Pool, `select last_value from docket_claim_tickets`)
	if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_claim_deliveries where ticket = $1 and outcomes = '{}'`, ticket); n != 1 {
		t.Fatalf("%d tombstones of the refused ticket %d, want 1", n, ticket)
	}
	testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 3), ids)
	if n := tombstones(t, e.Pool, "after the combiner's call"); n != 1 {
		t.Fatalf("%d tombstones after the combiner's call, want the refused call's 1", n)
	}
}

// A waiter whose lock wait runs out after its combiner read its marker
// waits for that combiner past the lock wait, on its ticket's served lock,
// and collects what the combiner leased for it: nothing is left leased to
// nobody.
func TestCombinedClaimWaiterPastItsLockWaitCollectsFromItsCombiner(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	c := newCombiner(t, e)
	waiter := beginCombiner(t, e)
	ctx := testkit.Context(t)
	collected := waiter.demandTwo(ctx)
	awaitLockWait(t, e.Pool, "ShareLock", waiter.pid())
	testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 1), ids[2:])
	// The combiner holds the combiner lock and the waiter's served lock;
	// once its lock wait runs out, the waiter waits for the served lock.
	awaitLockWait(t, e.Pool, "ExclusiveLock", waiter.pid())
	expectMarkers(t, e.Pool, 0, "while the waiter waits past its lock wait")
	if err := c.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.ClaimExpectIDs(t, "waiter", <-collected, ids[:2])
	if err := waiter.tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	expectNoDeliveries(t, e.Pool, "after the waiter collected")
}

// A combiner serves only the tickets whose served lock it gets without
// waiting and that have no delivery after it took the lock: a waiter that
// gave up holds its served lock until it commits, and leaves its tombstone
// then. The combiner walks for its own demand alone, and the skipped
// waiter, still waiting here, is served later.
func TestCombinedClaimSkipsAWithdrawingTicket(t *testing.T) {
	for _, withdrawal := range []string{"served lock", "tombstone"} {
		t.Run(withdrawal, func(t *testing.T) {
			e := testkit.NewClaimTenantFair(t, 10)
			ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
			client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
			c := newCombiner(t, e)
			// The waiter's lock wait runs from here: only the withdrawal's
			// statement comes between its wait and the combiner's read.
			other := beginCombiner(t, e)
			answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
			withdraw := `insert into docket_claim_deliveries (ticket, outcomes)
				select last_value, '{}' from docket_claim_tickets`
			if withdrawal == "served lock" {
				withdraw = `select pg_advisory_xact_lock(
					hashtext('docket_tenant_fair_claim_combined served ' || current_schema()),
					(select last_value::integer from docket_claim_tickets))`
			}
			if _, err := other.tx.Exec(testkit.Context(t), withdraw); err != nil {
				t.Fatal(err)
			}
			if withdrawal == "tombstone" {
				if err := other.tx.Commit(testkit.Context(t)); err != nil {
					t.Fatal(err)
				}
			}
			testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 1), ids[:1])
			if withdrawal == "served lock" {
				if err := other.tx.Rollback(testkit.Context(t)); err != nil {
					t.Fatal(err)
				}
			}
			if n := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_claim_deliveries where cardinality(outcomes) > 0`); n != 0 {
				t.Fatalf("%d deliveries with outcomes for the withdrawing ticket, want 0", n)
			}
			if withdrawal == "tombstone" {
				// The waiter is not gone; clear what stood for its withdrawal
				// so that its own walk below does not collect it.
				testkit.ExecSQL(t, e.Pool, `delete from docket_claim_deliveries`)
			}
			r := c.commitFor(answer)
			testkit.ClaimExpectIDs(t, "skipped waiter, walking itself", leasedIDs(r.res), ids[1:])
			expectNoDeliveries(t, e.Pool, "after the skipped waiter walked")
		})
	}
}

// A combined claim works in every pgx execution mode: a waiter is served
// by its combiner, and a waiter that outwaits the lock wait is refused with
// lock_contention, leaving only its tombstone.
func TestCombinedClaimInEveryQueryExecMode(t *testing.T) {
	for _, mode := range testkit.QueryExecModes {
		t.Run(mode.String(), func(t *testing.T) {
			e := testkit.NewClaimTenantFair(t, 10)
			ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
			cfg := e.Pool.Config().Copy()
			cfg.ConnConfig.DefaultQueryExecMode = mode
			pool, err := pgxpool.NewWithConfig(testkit.Context(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(10))
			c := newCombiner(t, e)
			answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
			testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 1), ids[2:])
			r := c.commitFor(answer)
			testkit.ClaimExpectIDs(t, "waiter", leasedIDs(r.res), ids[:2])
			newCombiner(t, e)
			_, err = client.ClaimDue(testkit.Context(t), testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
			testkit.ClaimExpectUnavailable(t, err, policy.ReasonLockContention)
			if n := tombstones(t, e.Pool, "after the refused call"); n != 1 {
				t.Fatalf("%d tombstones after the refused call, want 1", n)
			}
		})
	}
}

// A waiter whose context ends returns at once; its marker goes when its
// server-side wait ends, and no combiner that starts after that serves it.
// (One that reads the marker before it goes leases runs nobody collects;
// their claims expire after the claim TTL.) The test ends the waiter's
// statement on the server before the combiner's next call, as pgx's own
// cancel request does a moment later: left running, the statement's wait
// would run out while the combiner holds its lock, and it would leave a
// tombstone.
func TestCombinedClaimCancelledWaiterIsNotServed(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
	c := newCombiner(t, e)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	answer := waitingClaim(ctx, t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferNone))
	pids, err := testkit.CombinedWaiterPIDs(testkit.Context(t), e.Pool)
	if err != nil || len(pids) != 1 {
		t.Fatalf("waiting claim calls %v (%v), want one", pids, err)
	}
	cancel()
	r := <-answer
	if !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled waiter: err = %v, want context.Canceled", r.err)
	}
	if err := testkit.EndBackend(testkit.Context(t), e.Pool, pids[0]); err != nil {
		t.Fatalf("ending the cancelled waiter's statement: %v", err)
	}
	if err := testkit.AwaitActivity(testkit.Context(t), e.Pool, "not "+testkit.CombinedWaiterCondition, testkit.WorkerDeadline); err != nil {
		t.Fatalf("the cancelled waiter's marker stays: %v", err)
	}
	testkit.ClaimExpectIDs(t, "combiner", c.claim(testkit.ClaimBase, 3), ids)
	expectNoDeliveries(t, e.Pool, "after the combiner's call")
}

// Only callers of the combiner's claim TTL, attempts and preference are
// combined: a waiter of another preference keeps waiting through the
// combiner's call and then runs a walk of its own.
func TestCombinedClaimCombinesOnlyLikeRequests(t *testing.T) {
	e := testkit.NewClaimTenantFair(t, 10)
	ids := e.DueMany("a", "r", 3, testkit.ClaimBase.Add(-time.Minute))
	client := testkit.OpenClient(t, e.Pool, testkit.TenantFairConfig(10))
	c := newCombiner(t, e)
	answer := waitingClaim(testkit.Context(t), t, e.Pool, client, testkit.ClaimReq(testkit.ClaimBase, 2, docket.PreferReady))
	own := c.claim(testkit.ClaimBase, 1)
	expectMarkers(t, e.Pool, 1, "after the combiner's call")
	r := c.commitFor(answer)
	testkit.ClaimExpectIDs(t, "combiner", own, ids[:1])
	testkit.ClaimExpectIDs(t, "waiter", leasedIDs(r.res), ids[1:])
	expectNoDeliveries(t, e.Pool, "after the waiter walked")
}

// Sixteen demand-one claimers drain a backlog through combined calls: every
// run leased exactly once, no call failed, every lease the run's live
// claim and no delivery left behind but the tombstones of refused calls. A
// call refused with lock_contention waited out the lock wait (250 ms),
// which a loaded machine can make any call do; the claimer calls again, as
// a Worker does. A refused call whose combiner had read its marker would
// leave runs leased to nobody, which would keep the claimers from ever
// counting every run. A claimer stops once every
// run is leased, not at its first empty call: the kept claims leave all 40
// partitions in the ring, and a walk inspects at most 32 of them, so near
// the end a call may find nothing while a due run waits in a partition it
// did not reach (the next call starts where it stopped).
func TestCombinedClaimersDrainEveryRunOnce(t *testing.T) {
	const runs, tenants, claimers = 1600, 40, 16
	pool := testkit.ClaimPoolWithSize(t, claimers+2)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(1000))
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('c-%s', g), format('t%s', g % $2), 'g', 'h1', 'running', '{}', $3::timestamptz - interval '1 minute'
		  from generate_series(1, $1) g`, runs, tenants, testkit.ClaimBase)
	ctx := testkit.Context(t)
	leased := make(chan []string, claimers)
	failed := make(chan error, claimers)
	var total, refused atomic.Int64
	for range claimers {
		go func() {
			var mine []string
			for total.Load() < runs {
				res, err := client.ClaimDue(ctx, testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
				if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok && unavailable.Reason == policy.ReasonLockContention {
					refused.Add(1)
					continue
				}
				if err != nil {
					failed <- err
					return
				}
				ids := leasedIDs(res)
				total.Add(int64(len(ids)))
				mine = append(mine, ids...)
			}
			leased <- mine
		}()
	}
	seen := map[string]bool{}
	for range claimers {
		select {
		case err := <-failed:
			t.Fatalf("claimer: %v", err)
		case ids := <-leased:
			for _, id := range ids {
				if seen[id] {
					t.Fatalf("run %s leased twice", id)
				}
				seen[id] = true
			}
		}
	}
	if len(seen) != runs {
		t.Fatalf("%d runs leased, want %d", len(seen), runs)
	}
	if live := testkit.QueryInt64(t, pool, `select count(*) from docket_runs where claim_token is not null`); live != runs {
		t.Fatalf("%d live claims, want %d", live, runs)
	}
	if n := tombstones(t, pool, "after the drain"); n > refused.Load() {
		t.Fatalf("%d tombstones after the drain, want at most the %d refused calls", n, refused.Load())
	}
	t.Logf("%d calls refused with lock_contention and called again", refused.Load())
}
