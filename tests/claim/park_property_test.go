package claim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// env is one random parked-mode scenario: a fresh database, a parked-mode
// client, the logical clock, the leases handed out and the operation log.
type env struct {
	rt      *rapid.T
	ctx     context.Context
	pool    *pgxpool.Pool
	client  *docket.Client
	clock   time.Time
	tenants []string
	leases  []docket.Lease
	seq     int
	log     []string
}

// maxAttempts poisons a run on its third claim without a commit in
// between, so retries of poisoned runs come up.
const maxAttempts = 2

// TestParkedPropertyNoParkedPartitionHasEligibleWork: after every step of a
// random mix of inserts (due, later, waiting), claims, commits of every
// schedule, releases, resumes, wake_at changes, poison retries and clock
// moves, no parked partition holds a claimed run or a run due before its
// parked_until, and right after a claim call no parked partition is due at
// that call's now. Together: no parked partition has a run a call could take
// (a partition whose time comes between calls is woken by the next call's
// sweep before its walk).
func TestParkedPropertyNoParkedPartitionHasEligibleWork(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the property needs PostgreSQL")
	}
	testkit.DiffDefaultChecks(t, 20)
	rapid.Check(t, func(rt *rapid.T) {
		e, release := newPkEnv(t, rt)
		defer release()
		rt.Repeat(map[string]func(*rapid.T){
			"":        func(*rapid.T) { e.checkInvariant() },
			"insert":  func(*rapid.T) { e.opInsert() },
			"claim":   func(*rapid.T) { e.opClaim() },
			"commit":  func(*rapid.T) { e.opCommit() },
			"release": func(*rapid.T) { e.opRelease() },
			"resume":  func(*rapid.T) { e.opMutate("resume", `status = 'waiting'`) },
			"move": func(*rapid.T) {
				e.opMutate("move", `status = 'running' and poisoned_at is null and claim_token is null`)
			},
			"retry":    func(*rapid.T) { e.opRetry() },
			"tick":     func(*rapid.T) { e.opTick() },
			"parkSwap": func(*rapid.T) { e.opParkSwitch() },
		})
	})
}

func newPkEnv(t *testing.T, rt *rapid.T) (*env, func()) {
	tb := &testkit.DiffCheckTB{TB: t}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(tb))
	if err != nil {
		cancel()
		tb.Finish()
		rt.Fatalf("pool: %v", err)
	}
	release := func() {
		pool.Close()
		tb.Finish()
		cancel()
	}
	e := &env{rt: rt, ctx: ctx, pool: pool, clock: testkit.ClaimBase}
	for i := range rapid.IntRange(2, 5).Draw(rt, "tenants") {
		e.tenants = append(e.tenants, fmt.Sprintf("t%d", i+1))
	}
	capValue := rapid.IntRange(1, 3).Draw(rt, "cap")
	if e.client, err = docket.Open(ctx, pool, testkit.ParkedConfig(capValue)); err != nil {
		release()
		rt.Fatalf("open: %v", err)
	}
	e.logf("start: tenants %v, cap %d", e.tenants, capValue)
	return e, release
}

func (e *env) logf(format string, args ...any) {
	e.log = append(e.log, fmt.Sprintf("%3d  ", len(e.log))+fmt.Sprintf(format, args...))
}

func (e *env) fail(format string, args ...any) {
	e.rt.Helper()
	e.rt.Log("scenario:\n" + strings.Join(e.log, "\n"))
	e.rt.Fatalf(format, args...)
}

// offset draws a duration around the clock: due (negative), now or later.
func (e *env) offset(label string) time.Duration {
	return rapid.SampledFrom([]time.Duration{-time.Minute, 0, time.Minute, 20 * time.Minute, 2 * time.Hour}).Draw(e.rt, label)
}

// checkInvariant is the park invariant, checked after every step.
func (e *env) checkInvariant() {
	e.rt.Helper()
	var n int64
	if err := e.pool.QueryRow(e.ctx, testkit.ParkViolationsQuery).Scan(&n); err != nil {
		e.fail("invariant query: %v", err)
	}
	if n != 0 {
		e.fail("%d parked partition(s) hold a claimed run or a run due before parked_until:\n%s", n, e.schedule())
	}
}

// schedule renders the schedule rows and runs for a failure message.
func (e *env) schedule() string {
	var s string
	_ = e.pool.QueryRow(e.ctx, `select string_agg(format('%s parked_until=%s count=%s', scope_key, parked_until, unfinished_count), E'\n')
		  from docket_claim_schedule`).Scan(&s)
	var r string
	_ = e.pool.QueryRow(e.ctx, `select string_agg(format('%s %s %s wake=%s claimed=%s poisoned=%s', scope_key, run_id, status,
			wake_at, claim_token is not null, poisoned_at is not null), E'\n' order by id) from docket_runs`).Scan(&r)
	return s + "\n" + r
}

func (e *env) opInsert() {
	tenant := rapid.SampledFrom(e.tenants).Draw(e.rt, "tenant")
	e.seq++
	runID := fmt.Sprintf("r%d", e.seq)
	if rapid.IntRange(0, 3).Draw(e.rt, "waiting") == 0 {
		_, err := e.pool.Exec(e.ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state)
			values ($1, $2, 'g', 'h1', 'waiting', '{}')`, runID, tenant)
		e.logf("insert %s/%s waiting: %v", tenant, runID, err)
		if err != nil {
			e.fail("insert: %v", err)
		}
		return
	}
	d := e.offset("wake")
	_, err := e.client.InsertRun(e.ctx, docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: "g", GraphHash: "h1",
		State: []byte(`{}`), WakeAt: e.clock.Add(d)})
	e.logf("insert %s/%s due %+v: %v", tenant, runID, d, err)
	if err != nil {
		e.fail("insert: %v", err)
	}
}

func (e *env) opClaim() {
	limit := rapid.IntRange(1, 4).Draw(e.rt, "limit")
	tr, err := e.client.TraceClaimDue(e.ctx, docket.ClaimRequest{Now: e.clock, Limit: limit, ClaimTTL: testkit.ClaimTTL,
		MaxClaimAttempts: maxAttempts})
	if err != nil {
		e.fail("claim: %v", err)
	}
	parks := 0
	for _, in := range tr.Inspections {
		if in.Parked {
			parks++
		}
	}
	e.logf("claim limit %d at +%s: %d leases, %d poisoned, %d visits, %d parks", limit, e.clock.Sub(testkit.ClaimBase),
		len(tr.Result.Leases), len(tr.Result.Poisoned), len(tr.Inspections), parks)
	e.leases = append(e.leases, tr.Result.Leases...)
	var due int64
	if err := e.pool.QueryRow(e.ctx, `select count(*) from docket_claim_schedule
		 where parked_until <= $1 and exists (select 1 from docket_claim_policy where park_dormant)`, e.clock).Scan(&due); err != nil {
		e.fail("sweep check: %v", err)
	}
	if due != 0 {
		e.fail("after a claim at %s, %d parked partition(s) are due:\n%s", e.clock, due, e.schedule())
	}
}

// drawLease removes and returns a lease, if any.
func (e *env) drawLease() (docket.Lease, bool) {
	if len(e.leases) == 0 {
		return docket.Lease{}, false
	}
	i := rapid.IntRange(0, len(e.leases)-1).Draw(e.rt, "lease")
	l := e.leases[i]
	e.leases = append(e.leases[:i], e.leases[i+1:]...)
	return l, true
}

func (e *env) opCommit() {
	l, ok := e.drawLease()
	if !ok {
		return
	}
	schedules := map[string]docket.Disposition{
		"later":     docket.ReleaseAt(e.clock.Add(e.offset("release at"))),
		"immediate": docket.ReleaseImmediate(),
		"external":  docket.ReleaseExternal(),
		"done":      docket.ReleaseTerminal(docket.StatusDone),
		"retain":    docket.RetainClaim(),
	}
	name := rapid.SampledFrom([]string{"later", "immediate", "external", "done", "retain"}).Draw(e.rt, "schedule")
	run, err := e.client.Commit(e.ctx, docket.CommitRequest{Holder: l.Holder(), ExpectedSeq: l.CheckpointSeq, Step: 1,
		Disposition: schedules[name]})
	e.logf("commit %s %s: %v", l.RunID, name, err)
	if err != nil && !errors.Is(err, docket.ErrStaleFence) && !errors.Is(err, docket.ErrClaimLost) {
		e.fail("commit: %v", err)
	}
	if err == nil && name == "retain" {
		l.CheckpointSeq = run.CheckpointSeq
		e.leases = append(e.leases, l)
	}
}

func (e *env) opRelease() {
	l, ok := e.drawLease()
	if !ok {
		return
	}
	_, err := e.client.ReleaseClaim(e.ctx, l.Holder())
	e.logf("release %s: %v", l.RunID, err)
	if err != nil && !errors.Is(err, docket.ErrClaimLost) && !errors.Is(err, docket.ErrStaleFence) {
		e.fail("release: %v", err)
	}
}

// drawRun draws a run matching the SQL predicate, if any.
func (e *env) drawRun(label, predicate string) (tenant, runID string, ok bool) {
	rows, err := e.pool.Query(e.ctx, `select scope_key, run_id from docket_runs where `+predicate+` order by id`)
	if err != nil {
		e.fail("%s: %v", label, err)
	}
	type pick struct{ tenant, runID string }
	picks, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pick, error) {
		var p pick
		return p, r.Scan(&p.tenant, &p.runID)
	})
	if err != nil {
		e.fail("%s: %v", label, err)
	}
	if len(picks) == 0 {
		return "", "", false
	}
	p := picks[rapid.IntRange(0, len(picks)-1).Draw(e.rt, label)]
	return p.tenant, p.runID, true
}

// opMutate makes a drawn run running, due at a drawn time (zero: now).
func (e *env) opMutate(name, predicate string) {
	tenant, runID, ok := e.drawRun(name, predicate)
	if !ok {
		return
	}
	var wake time.Time
	d := e.offset("mutate wake")
	if d != 0 {
		wake = e.clock.Add(d)
	}
	res, err := e.client.MutateRun(e.ctx, docket.Tenant(tenant), runID, func(r docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusRunning, WakeAt: wake}, nil
	})
	e.logf("%s %s due %+v: changed %v, %v", name, runID, d, res.Changed, err)
	if err != nil && !errors.Is(err, docket.ErrInvalidTransition) {
		e.fail("%s: %v", name, err)
	}
}

func (e *env) opRetry() {
	tenant, runID, ok := e.drawRun("retry", `poisoned_at is not null`)
	if !ok {
		return
	}
	_, err := e.client.RetryPoisonedRun(e.ctx, docket.Tenant(tenant), runID)
	e.logf("retry %s: %v", runID, err)
	if err != nil {
		e.fail("retry: %v", err)
	}
}

func (e *env) opTick() {
	d := rapid.SampledFrom([]time.Duration{time.Second, 10 * time.Minute, 90 * time.Minute}).Draw(e.rt, "tick")
	e.clock = e.clock.Add(d)
	e.logf("tick %s", d)
}

// opParkSwitch turns parking off or on at runtime now and then.
func (e *env) opParkSwitch() {
	if rapid.IntRange(0, 4).Draw(e.rt, "switch") != 0 {
		return
	}
	on := rapid.Bool().Draw(e.rt, "park")
	_, err := e.client.PutClaimPolicyParking(e.ctx, on, docket.ClaimPolicyWriteOptions{})
	e.logf("park_dormant %v: %v", on, err)
	if err != nil {
		e.fail("parking switch: %v", err)
	}
}
