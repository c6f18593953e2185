package oracle

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Fixed-window fair rotation under real concurrency: pollers claim from hot
// competitors while one low-volume target partition gets work, and the
// committed trace of every window must pass the oracle's checker and stay
// within the bounds of docs/claim-algorithm.md, "The bounds".
//
// Commit order. Transaction ids are assigned when a transaction first writes,
// not when it commits, so they do not order calls. Every call instead runs in
// a transaction of its own that, after the claim statement and before
// committing, takes the next value of a sequence. The claim holds the policy
// row lock until it commits, and the next call can only start its claim after
// that, so the sequence values order the calls exactly as they committed. The
// transaction that inserts the target's work takes the same policy row lock
// and a sequence value too, so no call is in progress while the target's
// work commits and the window opens at the first call numbered after it.

// now is the claim time of every call: backlog runs are due before it,
// dormant runs long after it, and no claim ever expires.
var now = time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)

// pollers is the number of concurrent pollers.
const pollers = 4

// config is one fixed-window configuration.
type config struct {
	name    string
	seed    uint64
	hot     int // competitors, each with a backlog
	backlog int // due runs per competitor
	capped  int // competitors with a cap override of 1, see holdCalls
	// holdCalls is the most claim calls of other pollers across which a
	// poller holds a capped competitor's lease before completing it (drawn
	// per lease), so that those calls meet that competitor at its cap: an
	// intermittently eligible competitor.
	holdCalls   int
	dormant     bool // one more ring member with only future work (never eligible)
	targetFirst bool // the target partition exists, empty, before the competitors
	targetRuns  int  // runs the target gets per window
	maxDemand   int  // pollers draw demand 1..maxDemand
	rounds      int  // windows, one after another
	// parked turns parked partitions on, with dormants dormant ring members
	// (parked before the competitors get work) instead of one: the window's
	// C is then the awake ring, which stays fixed through every window.
	parked   bool
	dormants int
}

// call is one committed claim call and its commit sequence number.
type call struct {
	seq   int64
	trace docket.ClaimTrace
}

// rotationEnv is the database of one configuration.
type rotationEnv struct {
	t      *testing.T
	cfg    config
	ctx    context.Context
	pool   *pgxpool.Pool
	client *docket.Client
	rng    *rand.Rand
}

// TestFairRotationFixedWindowOracle runs several configurations of hot
// competitors and a low-volume target, several windows each, and checks every
// window's committed trace with oracle.Check and oracle.Bounds.
func TestFairRotationFixedWindowOracle(t *testing.T) {
	configs := []config{
		{name: "five hot competitors, target last", seed: 1, hot: 5, backlog: 600, targetRuns: 1, maxDemand: 4, rounds: 8},
		{name: "capped and dormant competitors, target first", seed: 2, hot: 5, backlog: 600, capped: 2, holdCalls: 12,
			dormant: true, targetFirst: true, targetRuns: 2, maxDemand: 4, rounds: 8},
		{name: "demand one, one capped competitor", seed: 3, hot: 5, backlog: 600, capped: 1,
			holdCalls: 12, targetRuns: 2, maxDemand: 1, rounds: 8},
		{name: "parked: capped competitors among 40 dormant members, target first", seed: 4, hot: 5, backlog: 600,
			capped: 2, holdCalls: 12, parked: true, dormants: 40, targetFirst: true, targetRuns: 2,
			maxDemand: 4, rounds: 8},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			t.Parallel()
			e := newFrEnv(t, cfg)
			ring := e.seed()
			for round := 1; round <= cfg.rounds; round++ {
				e.window(round, ring)
			}
		})
	}
}

// newFrEnv opens a fresh database with room for the pollers and a TenantFair
// client whose default cap never binds.
func newFrEnv(t *testing.T, cfg config) *rotationEnv {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	pcfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	pcfg.MaxConns = pollers + 2
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	clientCfg := testkit.TenantFairConfig(1000)
	if cfg.parked {
		clientCfg = testkit.ParkedConfig(1000)
	}
	e := &rotationEnv{t: t, cfg: cfg, ctx: ctx, pool: pool, client: testkit.OpenClient(t, pool, clientCfg),
		rng: rand.New(rand.NewPCG(cfg.seed, 0))}
	testkit.ExecSQL(t, pool, `create sequence fr_commit_order`)
	return e
}

// seed creates the partitions in ring order and the competitors' work, and
// returns the ring positions of the competitors and the dormant member.
func (e *rotationEnv) seed() map[int64]string {
	if e.cfg.targetFirst {
		// A cancelled run leaves the target's partition in place with no
		// unfinished work: a ring position that is not in the ring.
		e.insert("target", "target-seed", now)
		if _, err := e.client.Cancel(e.ctx, docket.Tenant("target"), "target-seed"); err != nil {
			e.t.Fatalf("cancel: %v", err)
		}
	}
	if e.cfg.parked {
		// The dormant members come next and are parked by claim calls that
		// find nothing else: the steady state of a parked domain.
		for d := 1; d <= e.cfg.dormants; d++ {
			e.insert(fmt.Sprintf("dormant%02d", d), fmt.Sprintf("dormant%02d-1", d), now.Add(1000*time.Hour))
		}
		for range (e.cfg.dormants + policy.InspectionsPerCall - 1) / policy.InspectionsPerCall {
			if _, err := e.client.ClaimDue(e.ctx, docket.ClaimRequest{Now: now, Limit: 1, ClaimTTL: time.Hour,
				MaxClaimAttempts: 1000}); err != nil {
				e.t.Fatalf("parking call: %v", err)
			}
		}
		if n := testkit.QueryInt64(e.t, e.pool, `select count(*) from docket_claim_schedule where parked_until is null and unfinished_count > 0`); n != 0 {
			e.t.Fatalf("%d dormant members are still awake", n)
		}
	}
	for h := 1; h <= e.cfg.hot; h++ {
		tenant := fmt.Sprintf("hot%d", h)
		runs := make([]docket.NewRun, e.cfg.backlog)
		for i := range runs {
			runs[i] = docket.NewRun{RunID: fmt.Sprintf("%s-%d", tenant, i), Scope: docket.Tenant(tenant), GraphID: "g",
				GraphHash: "h1", State: []byte(`{}`), WakeAt: now.Add(-time.Duration(e.cfg.backlog-i) * time.Second)}
		}
		if _, err := e.client.InsertRuns(e.ctx, runs); err != nil {
			e.t.Fatalf("backlog of %s: %v", tenant, err)
		}
		if e.isCapped(tenant + "-") {
			if _, err := e.client.PutClaimPolicyOverride(e.ctx, docket.Tenant(tenant), 1, docket.ClaimPolicyWriteOptions{}); err != nil {
				e.t.Fatalf("override: %v", err)
			}
		}
	}
	if e.cfg.parked {
		e.wakeTestDue(e.pool, "hot%")
	}
	if e.cfg.dormant {
		e.insert("dormant", "dormant-1", now.Add(1000*time.Hour))
	}
	return e.ring()
}

// wakeTestDue unparks, through q, the partitions whose scope keys match
// like. The test clock (now) is years after the database clock, so for the
// database their work, due at now, is not due yet, and the insert into
// their empty partitions parked them on write; a domain whose clock is the
// database's leaves a partition with due work awake.
func (e *rotationEnv) wakeTestDue(q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, like string) {
	e.t.Helper()
	if _, err := q.Exec(e.ctx, `update docket_claim_schedule set parked_until = null where scope_key like $1`, like); err != nil {
		e.t.Fatalf("wake %s: %v", like, err)
	}
}

// insert inserts one run.
func (e *rotationEnv) insert(tenant, runID string, wake time.Time) {
	e.t.Helper()
	_, err := e.client.InsertRun(e.ctx, docket.NewRun{RunID: runID, Scope: docket.Tenant(tenant), GraphID: "g",
		GraphHash: "h1", State: []byte(`{}`), WakeAt: wake})
	if err != nil {
		e.t.Fatalf("insert %s: %v", runID, err)
	}
}

// ring reads the positions with positive unfinished counts.
func (e *rotationEnv) ring() map[int64]string {
	e.t.Helper()
	rows, err := e.pool.Query(e.ctx, `select ring_position, scope_key from docket_claim_schedule where unfinished_count > 0`)
	if err != nil {
		e.t.Fatalf("ring: %v", err)
	}
	defer rows.Close()
	out := map[int64]string{}
	for rows.Next() {
		var pos int64
		var scope string
		if err := rows.Scan(&pos, &scope); err != nil {
			e.t.Fatalf("ring: %v", err)
		}
		out[pos] = scope
	}
	if err := rows.Err(); err != nil {
		e.t.Fatalf("ring: %v", err)
	}
	return out
}

// window runs one window: the pollers warm up, the target's work commits,
// and the pollers go on until every target run is claimed and completed. The
// committed trace from the opening through the target's first grant is then
// checked against the oracle.
func (e *rotationEnv) window(round int, competitors map[int64]string) {
	t := e.t
	var (
		mu       sync.Mutex
		calls    []call
		stop     atomic.Bool
		served   atomic.Int64
		firstErr error
		wg       sync.WaitGroup
	)
	progress := make(chan struct{}, 1024)
	gate := newHoldGate()
	stopAll := func() {
		stop.Store(true)
		gate.stop()
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
		stopAll()
	}
	for p := range pollers {
		rng := rand.New(rand.NewPCG(e.cfg.seed, uint64(round*pollers+p)))
		wg.Go(func() {
			for !stop.Load() {
				call, err := e.poll(rng)
				if err != nil {
					fail(err)
					return
				}
				if call == nil {
					continue // lock contention: no call
				}
				mu.Lock()
				calls = append(calls, *call)
				mu.Unlock()
				gate.called()
				for _, l := range call.trace.Result.Leases {
					if e.isCapped(l.RunID) && e.cfg.holdCalls > 0 {
						// Simulated work while the capped lease is held.
						gate.hold(rng.IntN(e.cfg.holdCalls + 1))
					}
					if err := e.complete(l); err != nil {
						fail(err)
						return
					}
					if strings.HasPrefix(l.RunID, "target") && served.Add(1) == int64(e.cfg.targetRuns) {
						stopAll()
					}
				}
				select {
				case progress <- struct{}{}:
				default:
				}
			}
		})
	}
	for range 6 + e.rng.IntN(18) {
		<-progress
	}
	opening, ring := e.openWindow(round)
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("round %d: %v", round, firstErr)
	}
	if got := e.ring(); !mapsEqual(got, competitors) {
		t.Fatalf("round %d: ring after the window = %v, want the competitors %v: a competitor drained or the target kept work", round, got, competitors)
	}
	if e.cfg.parked {
		// The awake ring stayed C: every dormant member is still parked.
		if n := testkit.QueryInt64(t, e.pool, `select count(*) from docket_claim_schedule where parked_until is not null`); n != int64(e.cfg.dormants) {
			t.Fatalf("round %d: %d parked partitions after the window, want the %d dormant members", round, n, e.cfg.dormants)
		}
	}
	slices.SortFunc(calls, func(a, b call) int { return int(a.seq - b.seq) })
	e.checkWindow(round, opening, ring, calls)
}

// holdGate lets a poller hold a capped lease across the claim calls other
// pollers commit meanwhile, counted rather than timed, so that the calls
// that meet the competitor at its cap do not depend on the machine's speed.
type holdGate struct {
	mu      sync.Mutex
	changed *sync.Cond
	// calls counts the window's committed claim calls, holding the pollers
	// that hold a lease now.
	calls, holding int
	stopped        bool
}

// newHoldGate returns the gate of one window.
func newHoldGate() *holdGate {
	g := &holdGate{}
	g.changed = sync.NewCond(&g.mu)
	return g
}

// called records a committed claim call.
func (g *holdGate) called() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls++
	g.changed.Broadcast()
}

// hold returns once n more claim calls were committed, every poller holds
// a lease (none could commit one), or the window stopped.
func (g *holdGate) hold(n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	target := g.calls + n
	g.holding++
	g.changed.Broadcast()
	for g.calls < target && g.holding < pollers && !g.stopped {
		g.changed.Wait()
	}
	g.holding--
}

// stop ends every hold: the window is over.
func (g *holdGate) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	g.changed.Broadcast()
}

// isCapped reports whether a run belongs to a capped competitor: the last
// ones in ring order, which the cursor passes right before it reaches the
// target.
func (e *rotationEnv) isCapped(runID string) bool {
	for h := e.cfg.hot - e.cfg.capped + 1; h <= e.cfg.hot; h++ {
		if strings.HasPrefix(runID, fmt.Sprintf("hot%d-", h)) {
			return true
		}
	}
	return false
}

// mapsEqual compares two rings.
func mapsEqual(a, b map[int64]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// poll runs one traced claim in its own transaction and records its commit
// sequence number. A call refused for policy lock contention rolls back and
// returns nil: it is no qualifying call.
func (e *rotationEnv) poll(rng *rand.Rand) (*call, error) {
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = tx.Rollback(e.ctx) }()
	req := docket.ClaimRequest{Now: now, Limit: 1 + rng.IntN(e.cfg.maxDemand), ClaimTTL: time.Hour, MaxClaimAttempts: 1000}
	tr, err := e.client.TraceClaimDueTx(e.ctx, tx, req)
	if unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok && unavailable.Reason == policy.ReasonLockContention {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	call := &call{trace: tr}
	if err := tx.QueryRow(e.ctx, `select nextval('fr_commit_order')`).Scan(&call.seq); err != nil {
		return nil, err
	}
	return call, tx.Commit(e.ctx)
}

// complete finishes a leased run.
func (e *rotationEnv) complete(l docket.Lease) error {
	_, err := e.client.Commit(e.ctx, docket.CommitRequest{Holder: l.Holder(), ExpectedSeq: l.CheckpointSeq, Step: 1,
		Disposition: docket.ReleaseTerminal(docket.StatusDone)})
	return err
}

// openWindow commits the target's due work while holding the policy row
// lock, so that no claim is in progress, and returns the commit sequence
// number of the opening and the ring C it leaves.
func (e *rotationEnv) openWindow(round int) (int64, map[int64]string) {
	t := e.t
	tx, err := e.pool.Begin(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(e.ctx) }()
	if _, err := tx.Exec(e.ctx, `select 1 from docket_claim_policy where id = 1 for update`); err != nil {
		t.Fatalf("lock policy: %v", err)
	}
	for i := range e.cfg.targetRuns {
		_, err := e.client.InsertRunTx(e.ctx, tx, docket.NewRun{RunID: fmt.Sprintf("target-%d-%d", round, i),
			Scope: docket.Tenant("target"), GraphID: "g", GraphHash: "h1", State: []byte(`{}`), WakeAt: now.Add(-time.Second)})
		if err != nil {
			t.Fatalf("insert target run: %v", err)
		}
	}
	if e.cfg.parked {
		e.wakeTestDue(tx, "target")
	}
	var seq int64
	if err := tx.QueryRow(e.ctx, `select nextval('fr_commit_order')`).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	// In parked mode C is the awake ring (H' instead of H).
	rows, err := tx.Query(e.ctx, `select ring_position, scope_key from docket_claim_schedule
		 where unfinished_count > 0 and (parked_until is null or not $1)`, e.cfg.parked)
	if err != nil {
		t.Fatal(err)
	}
	ring := map[int64]string{}
	for rows.Next() {
		var pos int64
		var scope string
		if err := rows.Scan(&pos, &scope); err != nil {
			t.Fatal(err)
		}
		ring[pos] = scope
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(e.ctx); err != nil {
		t.Fatal(err)
	}
	return seq, ring
}

// checkWindow converts the calls committed after the opening, through the
// call with the target's first grant, into oracle events, derives the cohort
// P and L from them and checks the trace and the bounds.
func (e *rotationEnv) checkWindow(round int, opening int64, ring map[int64]string, calls []call) {
	t := e.t
	var events []oracle.Event
	granted := false
	for _, c := range calls {
		if c.seq < opening || granted {
			continue
		}
		for _, in := range c.trace.Inspections {
			events = append(events, oracle.Event{Call: in.CallToken.String(), Visit: in.Visit, Demand: in.Demand,
				CursorBefore: in.CursorBefore, CursorAfter: in.CursorAfter, Scope: in.ScopeKey, Position: in.RingPosition,
				Disposition: oracle.Disposition(in.Disposition), Outcomes: in.Outcomes, EpochDelta: int64(in.EpochDelta),
				Parked: in.Parked})
			granted = granted || (in.ScopeKey == "target" && in.Disposition == policy.DispositionGrant)
		}
	}
	if !granted {
		t.Fatalf("round %d: the target never got a grant in %d calls", round, len(calls))
	}
	cohort := []string{"target"}
	failures, l := 0, 0
	for _, ev := range events {
		if ev.Scope == "target" {
			if ev.Disposition == oracle.DispGrant {
				break
			}
			failures++
			l = max(l, failures)
			continue
		}
		if ev.Disposition == oracle.DispGrant && !slices.Contains(cohort, ev.Scope) {
			cohort = append(cohort, ev.Scope)
		}
	}
	w := oracle.Window{Target: "target", Cohort: cohort, Ring: ring, S: policy.InspectionsPerCall, Q: policy.OutcomesPerGrant, L: l}
	obs, err := oracle.Check(events, w)
	if err != nil {
		t.Fatalf("round %d: %v\nwindow %+v\nevents %+v", round, err, w, events)
	}
	if e.cfg.parked {
		// The same window in the checker's parked mode: C is the whole
		// unfinished ring, the dormant members parked at the opening (they
		// stay parked, see window).
		full := maps.Clone(ring)
		rows, err := e.pool.Query(e.ctx, `select ring_position, scope_key from docket_claim_schedule where parked_until is not null`)
		if err != nil {
			t.Fatal(err)
		}
		var asleep []int64
		for rows.Next() {
			var pos int64
			var scope string
			if err := rows.Scan(&pos, &scope); err != nil {
				t.Fatal(err)
			}
			full[pos] = scope
			asleep = append(asleep, pos)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		pw := w
		pw.Ring, pw.Parked, pw.Asleep = full, true, asleep
		if _, err := oracle.Check(events, pw); err != nil {
			t.Fatalf("round %d, parked-mode check over H = %d: %v", round, len(full), err)
		}
	}
	b, err := oracle.Bounds(len(cohort), len(ring), w.S, w.Q, l)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !obs.TargetGranted:
		t.Fatalf("round %d: the checker saw no target grant", round)
	case l != 0:
		// Nothing else locks the target's partition or its run, and its cap
		// never binds: every target inspection must grant.
		t.Fatalf("round %d: %d consecutive failed target inspections, want 0", round, l)
	case obs.CompetingGrants > b.CompetingGrants, obs.CompetingOutcomes > b.CompetingOutcomes,
		obs.QualifyingCalls > b.QualifyingCalls:
		t.Fatalf("round %d: observed %+v exceeds bounds %+v (A=%d H=%d L=%d)", round, obs, b, len(cohort), len(ring), l)
	}
	visits := map[oracle.Disposition]int{}
	for _, ev := range events[:obs.TargetGrantEvent+1] {
		visits[ev.Disposition]++
	}
	h := "H"
	if e.cfg.parked {
		h = "H' (awake)"
	}
	t.Logf("round %d: A=%d %s=%d L=%d; competing grants %d <= %d, outcomes %d <= %d, qualifying calls %d <= %d; visits %v",
		round, len(cohort), h, len(ring), l, obs.CompetingGrants, b.CompetingGrants, obs.CompetingOutcomes,
		b.CompetingOutcomes, obs.QualifyingCalls, b.QualifyingCalls, visits)
}
