package oracle

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"pgregory.net/rapid"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/oracle"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The differential test drives the reference model and a real database with
// the same operations.
//
// Clocks: every claim passes the logical clock epoch + elapsed as Now, and
// the clock only moves forward. Several lifecycle writes (ReleaseClaim, the
// cooperative yield, RetryPoisonedRun, a MutateRun without a wake time, the
// retained claim refresh, abandon poison) take their time from the database
// clock now() instead. epoch lies far beyond any real date, so such a
// database time is always earlier than every logical time: a run it makes due
// is due for every later claim, and a refresh never moves a logical
// claimed_at. The model is handed the exact time the database wrote (read
// back from the written row), so FIFO order among those runs is compared
// exactly too.
var epoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// ttl is the fixed orphan TTL of every differential claim.
const ttl = time.Hour

// lease is one lease handed out by a claim: the model's token, the
// database's token and the checkpoint sequence the holder expects next.
type lease struct {
	runID, tenant string
	modelToken    string
	dbToken       uuid.UUID
	seq           int64
}

// diffEnv is one differential scenario: a fresh database with a TenantFair
// client, the model, the logical clock and the readable operation log.
type diffEnv struct {
	rt      *rapid.T
	ctx     context.Context
	pool    *pgxpool.Pool
	client  *docket.Client
	model   *oracle.Model
	clock   time.Time
	tenants []string
	leases  []*lease
	tokens  map[string]uuid.UUID // model token -> database token
	log     []string
	serial  int
	// parked runs the scenario with parked partitions on (both sides).
	parked bool
}

// newDfEnv draws the tenants and the default cap, creates the database and
// opens the client. The returned function releases everything.
func newDfEnv(t *testing.T, rt *rapid.T, parked bool) (*diffEnv, func()) {
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
	e := &diffEnv{rt: rt, ctx: ctx, pool: pool, clock: epoch, tokens: map[string]uuid.UUID{}, parked: parked}
	n := rapid.IntRange(3, 6).Draw(rt, "tenants")
	for i := range n {
		e.tenants = append(e.tenants, fmt.Sprintf("t%d", i+1))
	}
	defaultCap := rapid.SampledFrom([]int{1, 2, 3, 4, 50}).Draw(rt, "default cap")
	e.logf("start: tenants %v, default cap %d, logical clock %s, orphan TTL %s, parked %v",
		e.tenants, defaultCap, epoch.Format(time.RFC3339), ttl, parked)
	if e.model, err = oracle.NewModel(defaultCap); err != nil {
		release()
		rt.Fatalf("model: %v", err)
	}
	cfg := testkit.TenantFairConfig(defaultCap)
	if parked {
		cfg = testkit.ParkedConfig(defaultCap)
		e.model.SetParkDormant(true)
	}
	if e.client, err = docket.Open(ctx, pool, cfg); err != nil {
		release()
		rt.Fatalf("open: %v", err)
	}
	var before bool
	if err := pool.QueryRow(ctx, `select now() < $1`, epoch).Scan(&before); err != nil || !before {
		release()
		rt.Fatalf("the database clock must be before the logical epoch (%v, %v)", before, err)
	}
	return e, release
}

// logf appends one line to the operation log.
func (e *diffEnv) logf(format string, args ...any) {
	e.log = append(e.log, fmt.Sprintf("%3d  ", len(e.log))+fmt.Sprintf(format, args...))
}

// fail prints the operation log (the shrunk, replayable scenario when rapid
// reports the minimal failure) and fails the check.
func (e *diffEnv) fail(format string, args ...any) {
	e.rt.Helper()
	e.rt.Log("scenario (model vs database):\n" + strings.Join(e.log, "\n"))
	e.rt.Fatalf(format, args...)
}

// at renders a time: logical times as offsets from the logical epoch, times
// the database clock wrote as "db:" plus the time of day.
func (e *diffEnv) at(t time.Time) string {
	if t.Before(epoch.AddDate(-1, 0, 0)) {
		return "db:" + t.UTC().Format("15:04:05.000000")
	}
	if d := t.Sub(epoch); d < 0 {
		return d.String()
	}
	return "+" + t.Sub(epoch).String()
}

// live lists the leases whose token still holds the claim in the model.
func (e *diffEnv) live() []*lease {
	var out []*lease
	for _, l := range e.leases {
		if r, ok := e.model.Run(l.runID); ok && r.Token == l.modelToken {
			out = append(out, l)
		}
	}
	return out
}

// stale lists the leases whose token no longer holds the claim.
func (e *diffEnv) stale() []*lease {
	var out []*lease
	for _, l := range e.leases {
		if r, ok := e.model.Run(l.runID); ok && r.Token != l.modelToken {
			out = append(out, l)
		}
	}
	return out
}

// holder is the holder a lifecycle operation acts as, possibly stale.
type holder struct {
	lease *lease
	seq   int64  // the checkpoint sequence it claims to expect
	kind  string // "live", "stale token" or "stale seq"
}

// holder returns the docket holder identity.
func (h holder) holder() docket.Holder {
	return docket.Holder{Scope: docket.Tenant(h.lease.tenant), RunID: h.lease.runID, Token: h.lease.dbToken}
}

// String renders the holder for the log.
func (h holder) String() string {
	return fmt.Sprintf("%s (%s, seq %d)", h.lease.runID, h.kind, h.seq)
}

// drawHolder draws the holder of a lifecycle operation: mostly a live one,
// sometimes a holder whose token was replaced or whose sequence is outdated,
// which both implementations must refuse without a change.
func (e *diffEnv) drawHolder() (holder, bool) {
	live, stale := e.live(), e.stale()
	switch kind := rapid.IntRange(0, 5).Draw(e.rt, "holder kind"); {
	case kind <= 3 && len(live) > 0:
		l := live[rapid.IntRange(0, len(live)-1).Draw(e.rt, "live holder")]
		return holder{lease: l, seq: l.seq, kind: "live"}, true
	case kind == 4 && len(stale) > 0:
		l := stale[rapid.IntRange(0, len(stale)-1).Draw(e.rt, "stale holder")]
		return holder{lease: l, seq: l.seq, kind: "stale token"}, true
	case kind == 5 && len(live) > 0:
		l := live[rapid.IntRange(0, len(live)-1).Draw(e.rt, "outdated holder")]
		return holder{lease: l, seq: l.seq + 1, kind: "stale seq"}, true
	}
	return holder{}, false
}

// drawRun draws a run id, preferring runs that satisfy want.
func (e *diffEnv) drawRun(label string, want func(oracle.Run) bool) (oracle.Run, bool) {
	var pool []oracle.Run
	for _, r := range e.model.Runs() {
		if want(r) {
			pool = append(pool, r)
		}
	}
	if len(pool) == 0 {
		pool = e.model.Runs()
	}
	if len(pool) == 0 {
		return oracle.Run{}, false
	}
	return pool[rapid.IntRange(0, len(pool)-1).Draw(e.rt, label)], true
}
