package claim

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// A stale TenantFair visit froze candidate ids, locked at least one, and saw
// none pass the recheck against the locked version. The candidate statement
// reads its pages in one snapshot and locks the frozen ids in the same
// statement, so a stale visit needs a change committed between that snapshot
// and the row lock. The tests below stage exactly that with a test-only row
// level security policy on docket_runs whose predicate blocks on an advisory
// lock when it meets one chosen row: the claim pauses inside its page read,
// the test commits the change, then lets the claim go on. Production has no
// such policy. Row level security only applies to a role that neither owns
// the table nor is a superuser, so the paused claim runs as a role with the
// documented grants; the test's own writes and checks run as the owner.

// staleAdvisoryKey is the advisory lock the paused page read waits for. Each
// test has a database of its own, so a fixed key cannot collide.
const staleAdvisoryKey int64 = 7214231

// staleWait bounds every wait of the staged race.
const staleWait = 10 * time.Second

// stalePausedRead is the read of the chosen row, counted per transaction,
// that pauses: the ring window statement probes whether any page of the
// visited position is nonempty, which reads the row once, the visit's
// partition lock statement probes again (the second read), and the
// candidate statement's page read is the third.
const stalePausedRead = 3

// stalePause is a claim client that pauses when its page read meets one run.
type stalePause struct {
	t       *testing.T
	env     *testkit.ClaimEnv
	role    string
	claimer *docket.Client
}

// newStalePause installs the pause on targetRunID in e's database and opens a
// TenantFair client at defaultCap (the cap of e's own client) as a role with
// the documented grants, to which the pause applies.
func newStalePause(t *testing.T, e *testkit.ClaimEnv, targetRunID string, defaultCap int) *stalePause {
	t.Helper()
	var schema string
	if err := e.Pool.QueryRow(testkit.Context(t), `select n.nspname from pg_class c
		  join pg_namespace n on n.oid = c.relnamespace
		 where c.relname = 'docket_runs' and c.relkind = 'r'`).Scan(&schema); err != nil {
		t.Fatalf("schema of docket_runs: %v", err)
	}
	role, password := testkit.CreateRole(t, e.Pool)
	testkit.ApplyGrants(t, e.Pool, testkit.GrantsScript(t), schema, role, e.Pool.Config().ConnConfig.Database)

	// The wait runs under the claim function's 250 ms lock_timeout unless
	// the pause sets its own, which the SET clause restores on return.
	target := testkit.QueryInt64(t, e.Pool, `select id from docket_runs where run_id = $1`, targetRunID)
	pause := pgx.Identifier{schema, "docket_test_pause"}.Sanitize()
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`create function %s(p_id bigint) returns boolean
		language plpgsql
		volatile
		set lock_timeout = '%ds'
		as $pause$
		declare
			v_reads integer;
		begin
			if p_id = %d then
				v_reads := coalesce(nullif(current_setting('docket_test.target_reads', true), ''), '0')::integer + 1;
				perform set_config('docket_test.target_reads', v_reads::text, true);
				if v_reads = %d then
					perform pg_advisory_lock_shared(%d);
					perform pg_advisory_unlock_shared(%d);
				end if;
			end if;
			return true;
		end;
		$pause$`, pause, int(staleWait/time.Second), target, stalePausedRead, staleAdvisoryKey, staleAdvisoryKey))
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`grant execute on function %s(bigint) to %s`, pause, pgx.Identifier{role}.Sanitize()))
	runs := pgx.Identifier{schema, "docket_runs"}.Sanitize()
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`alter table %s enable row level security`, runs))
	testkit.ExecSQL(t, e.Pool, fmt.Sprintf(`create policy docket_test_pause on %s for all using (%s(id)) with check (true)`, runs, pause))

	app := testkit.RolePool(t, e.Pool.Config().ConnString(), role, password, schema)
	return &stalePause{t: t, env: e, role: role, claimer: testkit.OpenClient(t, app, testkit.TenantFairConfig(defaultCap))}
}

// claim runs a traced claim as the paused role while the test holds the
// advisory lock, waits until the claim blocks on it, runs change (as the
// owner), releases the lock and returns the claim's trace.
func (s *stalePause) claim(req docket.ClaimRequest, change func(ctx context.Context)) docket.ClaimTrace {
	s.t.Helper()
	ctx := testkit.Context(s.t)
	holder, err := pgx.ConnectConfig(ctx, s.env.Pool.Config().ConnConfig.Copy())
	if err != nil {
		s.t.Fatalf("connect lock holder: %v", err)
	}
	// Closing the holder ends its session lock, so a failed test never
	// leaves the claim blocked.
	s.t.Cleanup(func() { _ = holder.Close(context.Background()) })
	if _, err := holder.Exec(ctx, `select pg_advisory_lock($1)`, staleAdvisoryKey); err != nil {
		s.t.Fatalf("take the advisory lock: %v", err)
	}

	type claimed struct {
		tr  docket.ClaimTrace
		err error
	}
	done := make(chan claimed, 1)
	go func() {
		tr, err := s.claimer.TraceClaimDue(ctx, req)
		done <- claimed{tr, err}
	}()

	paused := make(chan error, 1)
	go func() {
		paused <- testkit.AwaitActivity(ctx, s.env.Pool, fmt.Sprintf(`exists (
				select 1
				  from pg_locks l
				  join pg_stat_activity a on a.pid = l.pid
				 where l.locktype = 'advisory' and l.mode = 'ShareLock' and not l.granted
				   and l.database = (select oid from pg_database where datname = current_database())
				   and l.classid::bigint = 0 and l.objid::bigint = %d and l.objsubid = 1
				   and a.usename = %s and a.query like '%%docket_tenant_fair_claim%%')`,
			staleAdvisoryKey, sqlLiteral(s.role)), staleWait)
	}()
	select {
	case err := <-paused:
		if err != nil {
			s.t.Fatalf("the claim did not block on the pause: %v", err)
		}
	case r := <-done:
		s.t.Fatalf("the claim ended before it reached the pause: err %v, inspections %+v", r.err, r.tr.Inspections)
	}

	change(ctx)

	var released bool
	if err := holder.QueryRow(ctx, `select pg_advisory_unlock($1)`, staleAdvisoryKey).Scan(&released); err != nil || !released {
		s.t.Fatalf("release the advisory lock: released %v, err %v", released, err)
	}
	select {
	case r := <-done:
		if r.err != nil {
			s.t.Fatalf("paused claim: %v", r.err)
		}
		return r.tr
	case <-time.After(staleWait):
		s.t.Fatalf("the claim did not finish within %s after the pause ended", staleWait)
		return docket.ClaimTrace{}
	}
}

// staleExpectStaleThenGrant checks the trace of a demand-one call that found
// staleTenant's visit stale and then granted grantRunID of grantTenant.
func staleExpectStaleThenGrant(t *testing.T, e *testkit.ClaimEnv, tr docket.ClaimTrace, cursorBefore int64,
	staleTenant, grantTenant, grantRunID string) {
	t.Helper()
	stalePos, grantPos := e.Position(staleTenant), e.Position(grantTenant)
	wantDispositions := []policy.Disposition{policy.DispositionStale, policy.DispositionGrant}
	if got := dispositions(tr); !slices.Equal(got, wantDispositions) {
		t.Fatalf("dispositions = %v, want %v", got, wantDispositions)
	}
	if got := positions(tr); !slices.Equal(got, []int64{stalePos, grantPos}) {
		t.Fatalf("positions = %v, want [%d %d]", got, stalePos, grantPos)
	}
	expectContiguous(t, tr, cursorBefore)
	for i, want := range []struct {
		scope      string
		outcomes   int
		epochDelta int
	}{{staleTenant, 0, 0}, {grantTenant, 1, 1}} {
		in := tr.Inspections[i]
		if in.ScopeKey != want.scope || in.Outcomes != want.outcomes || in.EpochDelta != want.epochDelta || in.Demand != 1 {
			t.Fatalf("inspection %d = %+v, want scope %q, %d outcomes, epoch delta %d, demand 1",
				i, in, want.scope, want.outcomes, want.epochDelta)
		}
	}
	testkit.ClaimExpectIDs(t, "outcomes", testkit.ClaimOutcomeIDs(tr), []string{grantRunID})
	if o := tr.Outcomes[0]; o.Visit != 2 || o.Ordinal != 1 || o.Class != docket.ClassQueuedReady ||
		o.Disposition != string(policy.OutcomeQueuedPromotion) || o.Poisoned {
		t.Fatalf("outcome = %+v, want a queued promotion of visit 2", o)
	}
	if len(tr.Result.Leases) != 1 || len(tr.Result.Poisoned) != 0 {
		t.Fatalf("result: %d leases, %d poisoned; want 1 and 0", len(tr.Result.Leases), len(tr.Result.Poisoned))
	}
	if got := e.Cursor(); got != grantPos {
		t.Fatalf("cursor = %d, want %d (the granting visit)", got, grantPos)
	}
	if got := e.State(grantRunID); got != (testkit.ClaimRunState{Claimed: true, Marked: true, Attempts: 1}) {
		t.Fatalf("%s = %+v, want claimed and admitted at attempt 1", grantRunID, got)
	}
	if e.Admitted(staleTenant) != 0 || e.LiveClaims(staleTenant) != 0 {
		t.Fatalf("%s: admitted %d, live %d; want none", staleTenant, e.Admitted(staleTenant), e.LiveClaims(staleTenant))
	}
	if e.Admitted(grantTenant) != 1 || e.LiveClaims(grantTenant) != 1 {
		t.Fatalf("%s: admitted %d, live %d; want 1 and 1", grantTenant, e.Admitted(grantTenant), e.LiveClaims(grantTenant))
	}
	testkit.ExpectRingExact(t, e.Pool)
}

// TestTenantFairStaleCandidateCancelledAfterPageRead: tenant a's only due run
// is frozen by a's page read, which pauses on it; the owner then cancels it
// and commits before the claim locks it. The lock returns the cancelled
// version, which fails the recheck, so a's visit is stale: no outcome, no
// epoch. The cursor moves on through a's position to b, whose run is granted.
func TestTenantFairStaleCandidateCancelledAfterPageRead(t *testing.T) {
	const defaultCap = 10
	e := testkit.NewClaimTenantFair(t, defaultCap)
	early := testkit.ClaimBase.Add(-time.Hour)
	e.Due("a", "a-target", early)
	e.Due("b", "b-1", early)
	if e.Position("a") != 1 || e.Position("b") != 2 {
		t.Fatalf("ring positions a %d, b %d; want 1 and 2", e.Position("a"), e.Position("b"))
	}
	cursorBefore, epochsBefore := e.Cursor(), e.Epochs()
	pause := newStalePause(t, e, "a-target", defaultCap)

	tr := pause.claim(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone), func(ctx context.Context) {
		res, err := e.Client.Cancel(ctx, docket.Tenant("a"), "a-target")
		if err != nil || !res.Changed {
			t.Fatalf("cancel a-target during the pause: changed %v, err %v", res.Changed, err)
		}
	})

	staleExpectStaleThenGrant(t, e, tr, cursorBefore, "a", "b", "b-1")
	if got := e.Epochs(); got["a"] != epochsBefore["a"] || got["b"] != epochsBefore["b"]+1 {
		t.Fatalf("epochs = %v, were %v; want a unchanged and b +1", got, epochsBefore)
	}
	if got := e.State("a-target"); got != (testkit.ClaimRunState{}) {
		t.Fatalf("a-target = %+v, want no claim, marker, poison or attempt", got)
	}
	var status string
	if err := e.Pool.QueryRow(testkit.Context(t), `select status from docket_runs where run_id = 'a-target'`).Scan(&status); err != nil || status != "cancelled" {
		t.Fatalf("a-target status = %q (err %v), want cancelled", status, err)
	}
}

// TestTenantFairStaleFIFORecheckRefusesMovedHead: a's page read freezes its
// FIFO head a-1 and pauses on it; the owner then moves a-1 behind a-2 (still
// due and queued) and commits. The locked a-1 passes the row recheck, but its
// wake time differs from the page read, so the FIFO re-check finds the older
// a-2 unpromoted and refuses a-1 as stale. The visit grants nothing; b's run
// is granted instead, and the next call promotes a-2, the true FIFO head.
func TestTenantFairStaleFIFORecheckRefusesMovedHead(t *testing.T) {
	const defaultCap = 10
	e := testkit.NewClaimTenantFair(t, defaultCap)
	early := testkit.ClaimBase.Add(-time.Hour)
	e.Due("a", "a-1", early)
	e.Due("a", "a-2", early.Add(time.Second))
	e.Due("b", "b-1", early)
	if e.Position("a") != 1 || e.Position("b") != 2 {
		t.Fatalf("ring positions a %d, b %d; want 1 and 2", e.Position("a"), e.Position("b"))
	}
	cursorBefore, epochsBefore := e.Cursor(), e.Epochs()
	pause := newStalePause(t, e, "a-1", defaultCap)
	moved := early.Add(2 * time.Second)

	tr := pause.claim(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone), func(ctx context.Context) {
		res, err := e.Client.MutateRun(ctx, docket.Tenant("a"), "a-1", func(docket.Run) (docket.Mutation, error) {
			return docket.Mutation{Status: docket.StatusRunning, WakeAt: moved}, nil
		})
		if err != nil || !res.Changed {
			t.Fatalf("move a-1 during the pause: changed %v, err %v", res.Changed, err)
		}
	})

	staleExpectStaleThenGrant(t, e, tr, cursorBefore, "a", "b", "b-1")
	if got := e.Epochs(); got["a"] != epochsBefore["a"] || got["b"] != epochsBefore["b"]+1 {
		t.Fatalf("epochs = %v, were %v; want a unchanged and b +1", got, epochsBefore)
	}
	for _, id := range []string{"a-1", "a-2"} {
		if got := e.State(id); got != (testkit.ClaimRunState{}) {
			t.Fatalf("%s = %+v, want no claim, marker, poison or attempt", id, got)
		}
	}
	// a-1 is still a fresh queued run, due at its new time: only the FIFO
	// re-check can have refused it.
	var wake time.Time
	if err := e.Pool.QueryRow(testkit.Context(t), `select wake_at from docket_runs
		 where run_id = 'a-1' and status = 'running' and claim_token is null and tenant_admitted_at is null`).Scan(&wake); err != nil || !wake.Equal(moved) {
		t.Fatalf("a-1 wake_at = %v (err %v), want a queued run due at %v", wake, err, moved)
	}

	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "next call", testkit.ClaimOutcomeIDs(tr), []string{"a-2"})
	if got := dispositions(tr); !slices.Equal(got, []policy.Disposition{policy.DispositionGrant}) {
		t.Fatalf("next call dispositions = %v, want one grant", got)
	}
	expectContiguous(t, tr, e.Position("b"))
}
