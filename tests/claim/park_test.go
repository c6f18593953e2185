package claim

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// parkExpectVisit fails unless in visited tenant with disposition d and the
// given park report.
func parkExpectVisit(t testing.TB, in docket.ClaimInspection, tenant string, d policy.Disposition, parked bool, until *time.Time) {
	t.Helper()
	okUntil := (in.ParkedUntil == nil) == (until == nil) && (until == nil || in.ParkedUntil.Equal(*until))
	if in.ScopeKey != tenant || in.Disposition != d || in.Parked != parked || !okUntil {
		t.Fatalf("inspection %+v, want scope %q, disposition %s, parked %v until %v", in, tenant, d, parked, until)
	}
}

// TestParkedDormantPartitionsParkAndLeaveTheWalk: a timer due later, a
// waiting run and a poisoned run make their partitions dormant; the first
// visit of each parks it (until the timer, or until a write) and stays an
// empty page, and later calls walk only the awake ring. The wake sweep of a
// call at the timer's time unparks the first partition, which that call then
// serves.
func TestParkedDormantPartitionsParkAndLeaveTheWalk(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	timer := testkit.ClaimBase.Add(time.Hour)
	e.Due("a", "a-timer", timer)
	e.Waiting("b", "b-wait")
	e.Poisoned("c", "c-poison")
	e.DueMany("d", "d", 2, testkit.ClaimBase.Add(-time.Hour))

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if len(tr.Inspections) != 4 {
		t.Fatalf("inspections = %+v, want 4", tr.Inspections)
	}
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionEmptyPage, true, &timer)
	parkExpectVisit(t, tr.Inspections[1], "b", policy.DispositionEmptyPage, true, nil)
	parkExpectVisit(t, tr.Inspections[2], "c", policy.DispositionEmptyPage, true, nil)
	parkExpectVisit(t, tr.Inspections[3], "d", policy.DispositionGrant, false, nil)
	for _, in := range tr.Inspections {
		if in.Woken != 0 || in.EpochDelta != btoi(in.Disposition == policy.DispositionGrant) {
			t.Fatalf("inspection %+v: want no wake and an epoch only for the grant", in)
		}
	}
	testkit.ClaimExpectIDs(t, "first call", testkit.ClaimOutcomeIDs(tr), []string{"d-1"})
	expectContiguous(t, tr, 0)
	e.ExpectPark("a", testkit.ParkedUntil(timer))
	e.ExpectPark("b", testkit.ParkedForGood)
	e.ExpectPark("c", testkit.ParkedForGood)
	e.ExpectPark("d", testkit.Awake)
	testkit.ParkExpectInvariant(t, e.Pool)

	// Only d is awake: the next call visits d alone.
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "second call", testkit.ClaimOutcomeIDs(tr), []string{"d-2"})
	if got := positions(tr); !slices.Equal(got, []int64{e.Position("d")}) {
		t.Fatalf("second call visited %v, want only d at %d", got, e.Position("d"))
	}

	// At the timer's time the sweep unparks a before the walk.
	tr = e.Trace(testkit.ClaimReq(timer, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "call at the timer", testkit.ClaimOutcomeIDs(tr), []string{"a-timer"})
	if len(tr.Inspections) != 1 || tr.Inspections[0].Woken != 1 {
		t.Fatalf("call at the timer: inspections %+v, want one visit after waking 1 partition", tr.Inspections)
	}
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionGrant, false, nil)
	e.ExpectPark("a", testkit.Awake)
	e.ExpectPark("b", testkit.ParkedForGood)
	testkit.ParkExpectInvariant(t, e.Pool)
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParkedClaimedPartitionNeverParks: a partition with any claimed running
// row, live, older than this call's cutoff or not, admitted or not, is not
// dormant: its visits are empty pages that do not park. A later call whose
// cutoff makes the old claim expired recovers it.
func TestParkedClaimedPartitionNeverParks(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	e.Claimed("x", "x-live", testkit.ClaimBase.Add(-time.Minute), true)
	e.Claimed("y", "y-old", testkit.ClaimBase.Add(-2*time.Hour), true)
	e.Claimed("z", "z-unadmitted", testkit.ClaimBase.Add(-time.Minute), false)
	e.Due("w", "w-1", testkit.ClaimBase.Add(-time.Hour))

	req := testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone)
	req.ClaimTTL = 3 * time.Hour
	tr := e.Trace(req)
	if len(tr.Inspections) != 4 {
		t.Fatalf("inspections = %+v, want 4", tr.Inspections)
	}
	for i, tenant := range []string{"x", "y", "z"} {
		parkExpectVisit(t, tr.Inspections[i], tenant, policy.DispositionEmptyPage, false, nil)
		e.ExpectPark(tenant, testkit.Awake)
	}
	parkExpectVisit(t, tr.Inspections[3], "w", policy.DispositionGrant, false, nil)

	// With the test's one-hour TTL y's claim is expired: the walk wraps to
	// x (still not parked) and recovers y.
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "recovery", testkit.ClaimOutcomeIDs(tr), []string{"y-old"})
	parkExpectVisit(t, tr.Inspections[0], "x", policy.DispositionEmptyPage, false, nil)
	parkExpectVisit(t, tr.Inspections[1], "y", policy.DispositionGrant, false, nil)
	if o := tr.Outcomes[0]; o.Disposition != string(policy.OutcomeExpiredRecovery) {
		t.Fatalf("outcome %+v, want an expired recovery", o)
	}
	for _, tenant := range []string{"x", "y", "z", "w"} {
		e.ExpectPark(tenant, testkit.Awake)
	}
	testkit.ParkExpectInvariant(t, e.Pool)
}

// TestParkedLockedScheduleRowIsSkippedNotWaited: a park that finds the
// schedule row locked leaves the partition awake and goes on at once; the
// next visit, with the row free, parks it.
func TestParkedLockedScheduleRowIsSkippedNotWaited(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	timer := testkit.ClaimBase.Add(time.Hour)
	e.Due("a", "a-timer", timer)
	e.DueMany("b", "b", 2, testkit.ClaimBase.Add(-time.Hour))
	release := e.HoldLock(`select 1 from docket_claim_schedule where scope_key = 'a' for no key update`)

	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if len(tr.Inspections) != 2 {
		t.Fatalf("inspections = %+v, want 2", tr.Inspections)
	}
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionEmptyPage, false, nil)
	parkExpectVisit(t, tr.Inspections[1], "b", policy.DispositionGrant, false, nil)
	e.ExpectPark("a", testkit.Awake)
	release()

	// The cursor is on b; the walk wraps to a, which parks now.
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionEmptyPage, true, &timer)
	parkExpectVisit(t, tr.Inspections[1], "b", policy.DispositionGrant, false, nil)
	e.ExpectPark("a", testkit.ParkedUntil(timer))
	testkit.ParkExpectInvariant(t, e.Pool)
}

// TestParkedWakeSweepSkipsLockedRow: a partition whose wake time has come
// but whose schedule row is locked is skipped by the sweep (not woken, not
// visited, no wait) and unparked by the next call.
func TestParkedWakeSweepSkipsLockedRow(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	timer := testkit.ClaimBase.Add(time.Hour)
	e.Due("a", "a-timer", timer)
	e.DueMany("b", "b", 3, testkit.ClaimBase.Add(-time.Hour))
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionEmptyPage, true, &timer)
	e.ExpectPark("a", testkit.ParkedUntil(timer))

	later := timer.Add(time.Minute)
	release := e.HoldLock(`select 1 from docket_claim_schedule where scope_key = 'a' for no key update`)
	tr = e.Trace(testkit.ClaimReq(later, 1, docket.PreferNone))
	if got := positions(tr); !slices.Equal(got, []int64{e.Position("b")}) || tr.Inspections[0].Woken != 0 {
		t.Fatalf("call with a's row locked: inspections %+v, want one visit of b and nothing woken", tr.Inspections)
	}
	e.ExpectPark("a", testkit.ParkedUntil(timer))
	release()

	tr = e.Trace(testkit.ClaimReq(later, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "after the lock", testkit.ClaimOutcomeIDs(tr), []string{"a-timer"})
	if tr.Inspections[0].Woken != 1 {
		t.Fatalf("inspections %+v, want 1 partition woken", tr.Inspections)
	}
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionGrant, false, nil)
	e.ExpectPark("a", testkit.Awake)
	testkit.ParkExpectInvariant(t, e.Pool)
}

// TestParkedWakeSweepIsBounded: a call unparks at most 64 partitions whose
// time has come, earliest first; the next call unparks the rest.
func TestParkedWakeSweepIsBounded(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	const tenants = 70
	e.ExecWalkParks(`insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('r%s', g), format('t%s', lpad(g::text, 3, '0')), 'g', 'h1', 'running', '{}',
		       $1::timestamptz + make_interval(secs => g)
		  from generate_series(1, $2::integer) as g`, testkit.ClaimBase.Add(time.Hour), tenants)
	// 32 parks per call, then an empty awake ring.
	for call, want := range []int{32, 32, 6, 0} {
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
		if len(tr.Inspections) != want {
			t.Fatalf("parking call %d: %d inspections, want %d", call+1, len(tr.Inspections), want)
		}
		for _, in := range tr.Inspections {
			if !in.Parked || in.Disposition != policy.DispositionEmptyPage {
				t.Fatalf("parking call %d: inspection %+v, want a park", call+1, in)
			}
		}
	}
	parkedCount := func() int64 {
		return testkit.QueryInt64(t, e.Pool, `select count(*) from docket_claim_schedule where parked_until is not null`)
	}
	if got := parkedCount(); got != tenants {
		t.Fatalf("parked partitions = %d, want %d", got, tenants)
	}

	later := testkit.ClaimBase.Add(2 * time.Hour)
	tr := e.Trace(testkit.ClaimReq(later, 1, docket.PreferNone))
	if len(tr.Inspections) != 1 || tr.Inspections[0].Woken != 64 {
		t.Fatalf("first sweep: inspections %+v, want one visit after waking 64", tr.Inspections)
	}
	// Earliest first: t001..t064 are awake, t065..t070 still parked.
	if got := testkit.QueryInt64(t, e.Pool, `select count(*) from docket_claim_schedule
		 where parked_until is not null and scope_key between 't065' and 't070'`); got != 6 || parkedCount() != 6 {
		t.Fatalf("after the first sweep %d partitions are parked (%d of t065..t070), want exactly those 6", parkedCount(), got)
	}
	tr = e.Trace(testkit.ClaimReq(later, 1, docket.PreferNone))
	if tr.Inspections[0].Woken != 6 || parkedCount() != 0 {
		t.Fatalf("second sweep: woken %d, %d still parked; want 6 and 0", tr.Inspections[0].Woken, parkedCount())
	}
	testkit.ParkExpectInvariant(t, e.Pool)
}

// TestParkedTurningOffReturnsToTheFullRingWalk: turning parking off
// unparks every partition in the same transaction, and calls walk the whole
// unfinished ring again without parking; turning it on again parks again.
func TestParkedTurningOffReturnsToTheFullRingWalk(t *testing.T) {
	t.Parallel()
	e := testkit.NewClaimWalkParked(t, 10)
	timer := testkit.ClaimBase.Add(time.Hour)
	e.Due("a", "a-timer", timer)
	e.DueMany("b", "b", 2, testkit.ClaimBase.Add(-time.Hour))
	e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	e.ExpectPark("a", testkit.ParkedUntil(timer))

	ctx := testkit.Context(t)
	current, err := e.Client.FetchClaimPolicyDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	off, err := e.Client.PutClaimPolicyParking(ctx, false, docket.ClaimPolicyWriteOptions{ExpectedVersion: &current.Version})
	if err != nil {
		t.Fatal(err)
	}
	if off.ParkDormant || !off.ConfiguredParkDormant || off.Version != current.Version+1 {
		t.Fatalf("after turning parking off: %+v, want off, configured on, version %d", off, current.Version+1)
	}
	e.ExpectPark("a", testkit.Awake)

	// The full-ring walk: a is visited again and stays awake; the
	// unfilled call wraps the two-position ring up to S visits.
	tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	testkit.ClaimExpectIDs(t, "full-ring walk", testkit.ClaimOutcomeIDs(tr), []string{"b-2"})
	parkExpectVisit(t, tr.Inspections[0], "a", policy.DispositionEmptyPage, false, nil)
	parkExpectVisit(t, tr.Inspections[1], "b", policy.DispositionGrant, false, nil)
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if len(tr.Inspections) != policy.InspectionsPerCall {
		t.Fatalf("unfilled spec call: %d inspections, want %d", len(tr.Inspections), policy.InspectionsPerCall)
	}
	for _, in := range tr.Inspections {
		if in.Parked || in.Woken != 0 || in.Disposition != policy.DispositionEmptyPage {
			t.Fatalf("full-ring walk inspection %+v: want an empty page without park or sweep", in)
		}
	}
	e.ExpectPark("a", testkit.Awake)

	// Turning parking on parks the dormant a at once (the batch park of the
	// switch), so the next call no longer visits it.
	if _, err := e.Client.PutClaimPolicyParking(ctx, true, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.ExpectPark("a", testkit.ParkedUntil(timer))
	tr = e.Trace(testkit.ClaimReq(testkit.ClaimBase, 1, docket.PreferNone))
	if slices.ContainsFunc(tr.Inspections, func(in docket.ClaimInspection) bool { return in.ScopeKey == "a" }) {
		t.Fatalf("after turning parking on again a was visited: %+v", tr.Inspections)
	}
	e.ExpectPark("a", testkit.ParkedUntil(timer))
}

// TestParkedPolicyWrites: ParkDormant is synchronized at startup like the
// cap (a changed configured value is written, an unchanged one writes
// nothing, so a runtime change survives restarts), runtime writes are
// compare-and-set on the policy version, and a switch from Legacy unparks.
func TestParkedPolicyWrites(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{TenantMode: docket.TenantRequired})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.PutClaimPolicyParking(ctx, true, docket.ClaimPolicyWriteOptions{}); !errors.Is(err, docket.ErrNotInitialized) {
		t.Fatalf("parking write before initialization: %v, want ErrNotInitialized", err)
	}
	expect := func(what string, park, configured bool, version int64) {
		t.Helper()
		d, err := admin.FetchClaimPolicyDefault(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.ParkDormant != park || d.ConfiguredParkDormant != configured || d.Version != version {
			t.Fatalf("%s: policy %+v, want park %v, configured %v, version %d", what, d, park, configured, version)
		}
	}

	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	expect("spec start", false, false, 1)
	testkit.OpenClient(t, pool, testkit.ParkedConfig(4))
	expect("configured on", true, true, 2)
	testkit.OpenClient(t, pool, testkit.ParkedConfig(4))
	expect("unchanged restart", true, true, 2)

	stale := int64(1)
	if _, err := admin.PutClaimPolicyParking(ctx, false, docket.ClaimPolicyWriteOptions{ExpectedVersion: &stale}); !errors.Is(err, docket.ErrStale) {
		t.Fatalf("stale parking write: %v, want ErrStale", err)
	}
	expect("after a stale write", true, true, 2)
	if _, err := admin.PutClaimPolicyParking(ctx, false, docket.ClaimPolicyWriteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("runtime off", false, true, 3)
	testkit.OpenClient(t, pool, testkit.ParkedConfig(4))
	expect("restart keeps the runtime choice", false, true, 3)
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	expect("configured off", false, false, 4)
	testkit.OpenClient(t, pool, testkit.ParkedConfig(4))
	expect("configured on again", true, true, 5)

	// A Legacy interlude: the switch back to TenantFair unparks everything.
	testkit.ExecSQL(t, pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		values ('r1', 'a', 'g', 'h1', 'running', '{}', now() + interval '1 day')`)
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = 'infinity'`)
	testkit.OpenClient(t, pool, docket.Config{TenantMode: docket.TenantNone, ClaimPolicy: policy.Legacy{}})
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 1 {
		t.Fatalf("parked partitions under Legacy = %d, want 1 (Legacy leaves them)", n)
	}
	// The start unparks every partition, then parks again what is dormant
	// now: a, until its run's wake_at rather than the 'infinity' set above.
	testkit.OpenClient(t, pool, testkit.ParkedConfig(4))
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule
		 where parked_until is not null
		   and parked_until is distinct from (select wake_at from docket_runs where run_id = 'r1')`); n != 0 {
		t.Fatalf("partitions parked otherwise than a until r1's wake_at after the switch to TenantFair = %d, want 0", n)
	}
	if n := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != 1 {
		t.Fatalf("parked partitions after the switch to TenantFair = %d, want 1 (a, parked again)", n)
	}
	expect("after the Legacy interlude", true, true, 5)

	inspection, err := admin.InspectClaimPolicy(ctx, docket.Tenant("a"))
	if err != nil {
		t.Fatal(err)
	}
	if !inspection.ParkDormant || !inspection.Parked || inspection.ParkedUntil == nil {
		t.Fatalf("inspection %+v, want parking on and a parked until its run's wake_at", inspection)
	}
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = null where scope_key = 'a'`)
	if inspection, err = admin.InspectClaimPolicy(ctx, docket.Tenant("a")); err != nil {
		t.Fatal(err)
	}
	if !inspection.ParkDormant || inspection.Parked || inspection.ParkedUntil != nil {
		t.Fatalf("inspection %+v, want parking on and a awake", inspection)
	}
	until := testkit.ClaimBase.Add(time.Hour)
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = $1 where scope_key = 'a'`, until)
	if inspection, err = admin.InspectClaimPolicy(ctx, docket.Tenant("a")); err != nil {
		t.Fatal(err)
	}
	if !inspection.Parked || inspection.ParkedUntil == nil || !inspection.ParkedUntil.Equal(until) {
		t.Fatalf("inspection %+v, want parked until %v", inspection, until)
	}
	testkit.ExecSQL(t, pool, `update docket_claim_schedule set parked_until = 'infinity' where scope_key = 'a'`)
	if inspection, err = admin.InspectClaimPolicy(ctx, docket.Tenant("a")); err != nil {
		t.Fatal(err)
	}
	if !inspection.Parked || inspection.ParkedUntil != nil {
		t.Fatalf("inspection %+v, want parked until a write", inspection)
	}
}

// TestParkedActiveTenantsAmongManyDormantAreServedPromptly: 20 tenants with
// a backlog among 2,000 whose only run is due tomorrow, cap 4, demand 8,
// each call's leases finished before the next call. While the first
// revolution parks the dormant partitions, every call visits exactly the
// positions a small model of the walk predicts (parks are empty pages,
// grants stop the call at its demand). Once they are parked, every call
// visits only backlogged tenants: two grants of four per call, and all 20
// tenants are served in 10 calls.
func TestParkedActiveTenantsAmongManyDormantAreServedPromptly(t *testing.T) {
	t.Parallel()
	const (
		tenants  = 2020
		every    = 101 // tenants t0000, t0101, ... t1919 have a backlog
		active   = 20
		backlog  = 100
		capValue = 4
		demand   = 8
	)
	e := testkit.NewClaimWalkParked(t, capValue)
	e.ExecWalkParks(`insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select format('t%s-%s', lpad(i::text, 4, '0'), k), format('t%s', lpad(i::text, 4, '0')), 'g', 'h1', 'running', '{}',
		       case when i % $3 = 0 then $1::timestamptz - interval '1 hour' + make_interval(secs => k)
		            else $1::timestamptz + interval '1 day' end
		  from generate_series(0, $2::integer - 1) as i,
		       lateral generate_series(1, case when i % $3 = 0 then $4::integer else 1 end) as k`,
		testkit.ClaimBase, tenants, every, backlog)
	if got := e.Position("t1919"); got != 1920 {
		t.Fatalf("position of t1919 = %d, want 1920 (positions in key order)", got)
	}

	// The model: positions 1..tenants, the backlogged ones at 1 + i*every.
	isActive := func(pos int64) bool { return (pos-1)%every == 0 }
	parked := map[int64]bool{}
	cursor := int64(0)
	next := func() (int64, bool) {
		for step := int64(1); step <= tenants; step++ {
			pos := (cursor+step-1)%tenants + 1
			if !parked[pos] {
				return pos, true
			}
		}
		return 0, false
	}
	type visit struct {
		pos    int64
		parked bool
	}
	modelCall := func() []visit {
		var visits []visit
		for grants := 0; len(visits) < policy.InspectionsPerCall && grants*capValue < demand; {
			pos, ok := next()
			if !ok {
				break
			}
			cursor = pos
			if isActive(pos) {
				grants++
				visits = append(visits, visit{pos, false})
			} else {
				parked[pos] = true
				visits = append(visits, visit{pos, true})
			}
		}
		return visits
	}
	finishLeases := func(tr docket.ClaimTrace) {
		ids := make([]string, len(tr.Result.Leases))
		for i, l := range tr.Result.Leases {
			ids[i] = l.RunID
		}
		e.Finish(ids...)
	}

	calls := 0
	var events []oracle.Event
	for len(parked) < tenants-active {
		calls++
		want := modelCall()
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, demand, docket.PreferNone))
		events = append(events, parkEvents(tr)...)
		if len(tr.Inspections) != len(want) {
			t.Fatalf("call %d: %d inspections, model %d", calls, len(tr.Inspections), len(want))
		}
		for i, in := range tr.Inspections {
			wantDisposition := policy.DispositionEmptyPage
			if !want[i].parked {
				wantDisposition = policy.DispositionGrant
			}
			if in.RingPosition != want[i].pos || in.Parked != want[i].parked || in.Disposition != wantDisposition {
				t.Fatalf("call %d visit %d: %+v, model position %d parked %v", calls, i+1, in, want[i].pos, want[i].parked)
			}
		}
		finishLeases(tr)
		if calls > tenants {
			t.Fatal("the dormant partitions were never all parked")
		}
	}
	t.Logf("the first revolution parked %d partitions in %d calls", tenants-active, calls)
	testkit.ParkExpectInvariant(t, e.Pool)
	// The committed trace of the revolution passes the oracle's parked-mode
	// mechanics over the whole unfinished ring, nothing parked at its start.
	ring := map[int64]string{}
	for pos := int64(1); pos <= tenants; pos++ {
		ring[pos] = fmt.Sprintf("t%04d", pos-1)
	}
	if _, err := oracle.CheckMechanicsParked(events, ring, nil, policy.InspectionsPerCall, policy.OutcomesPerGrant); err != nil {
		t.Fatalf("the revolution's trace: %v", err)
	}

	served := map[string]bool{}
	for call := 1; call <= active*capValue/demand; call++ {
		tr := e.Trace(testkit.ClaimReq(testkit.ClaimBase, demand, docket.PreferNone))
		if len(tr.Inspections) != demand/capValue {
			t.Fatalf("steady call %d: inspections %+v, want %d grants", call, tr.Inspections, demand/capValue)
		}
		for _, in := range tr.Inspections {
			if in.Disposition != policy.DispositionGrant || in.Outcomes != capValue || served[in.ScopeKey] {
				t.Fatalf("steady call %d: inspection %+v, want a grant of %d to a tenant not yet served", call, in, capValue)
			}
			served[in.ScopeKey] = true
		}
		finishLeases(tr)
	}
	if len(served) != active {
		t.Fatalf("served %d tenants in %d calls, want all %d", len(served), active*capValue/demand, active)
	}
}

// parkEvents converts a trace's inspections to oracle events.
func parkEvents(tr docket.ClaimTrace) []oracle.Event {
	out := make([]oracle.Event, len(tr.Inspections))
	for i, in := range tr.Inspections {
		out[i] = oracle.Event{Call: in.CallToken.String(), Visit: in.Visit, Demand: in.Demand,
			CursorBefore: in.CursorBefore, CursorAfter: in.CursorAfter, Scope: in.ScopeKey, Position: in.RingPosition,
			Disposition: oracle.Disposition(in.Disposition), Outcomes: in.Outcomes, EpochDelta: int64(in.EpochDelta),
			Parked: in.Parked}
	}
	return out
}
