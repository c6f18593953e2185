package input

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// inputCase is one bad input to one public function.
type inputCase struct {
	name string
	// want lists the sentinels the error must match with errors.Is; empty
	// means the call must succeed (a documented no-op such as a stale
	// release) and still write nothing.
	want []error
	// reason, when set, is the ClaimPolicyUnavailableError reason the error
	// must carry instead of a sentinel.
	reason string
	// local says the input is refused before any statement reaches the
	// server.
	local bool
	// cancelled runs the call with an already cancelled context.
	cancelled bool
	// mentions, when set, is text the error must contain: the field it
	// names.
	mentions string
	call     func(ctx context.Context, env *inputEnv) error
}

// inputEnv is a TenantFair domain (required tenancy) with one run in
// every interesting state, and a client and admin whose pool counts the
// statements it sends.
type inputEnv struct {
	t       *testing.T
	super   *pgxpool.Pool
	pool    *pgxpool.Pool
	counter *queryCounter
	client  *docket.Client
	admin   *docket.Admin
	// lease is a live claim of the run "held" in tenant acme.
	lease docket.Lease
	tx    pgx.Tx
}

// Fixture run ids of the bad-input domain. Every run but held, other and
// queued belongs to acme.
const (
	runHeld     = "held"
	runQueued   = "queued"
	runPoisoned = "poisoned"
	runFinished = "finished"
	runWaiting  = "waiting"
	runOther    = "other" // of tenant globex
)

// acme is the tenant that owns the fixture runs.
var acme = docket.Tenant("acme")

// newHardInputEnv builds the fixture: a live lease, a queued run due in the
// future, a poisoned, a finished and a waiting run, and another tenant's run.
func newHardInputEnv(t *testing.T) *inputEnv {
	t.Helper()
	databaseURL := pgtest.NewDatabase(t)
	env := &inputEnv{t: t, super: testkit.PoolFor(t, databaseURL), counter: &queryCounter{}}
	cfg := testkit.PoolConfig(t, databaseURL, 4)
	cfg.ConnConfig.Tracer = env.counter
	env.pool = testkit.Pool(t, cfg)
	env.client = testkit.OpenClient(t, env.pool, testkit.TenantFairConfig(2))
	admin, err := docket.NewAdmin(testkit.Context(t), env.pool, docket.AdminConfig{TenantMode: docket.TenantRequired})
	if err != nil {
		t.Fatalf("NewAdmin: %v", err)
	}
	env.admin = admin

	ctx := testkit.Context(t)
	if _, err := env.client.InsertRun(ctx, newRun(runHeld)); err != nil {
		t.Fatalf("insert %s: %v", runHeld, err)
	}
	res, err := env.client.ClaimDue(ctx, docket.ClaimRequest{Now: time.Now().Add(time.Minute), Limit: 1, ClaimTTL: time.Hour, MaxClaimAttempts: 10})
	if err != nil || len(res.Leases) != 1 || res.Leases[0].RunID != runHeld {
		t.Fatalf("claim %s: %+v, %v", runHeld, res, err)
	}
	env.lease = res.Leases[0]
	later := time.Now().Add(24 * time.Hour)
	queued := newRun(runQueued)
	queued.WakeAt = later
	other := newRun(runOther)
	other.Scope, other.WakeAt = docket.Tenant("globex"), later
	if _, err := env.client.InsertRuns(ctx, []docket.NewRun{queued, other}); err != nil {
		t.Fatalf("insert fixture runs: %v", err)
	}
	testkit.ExecSQL(t, env.super, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, poisoned_at, poison_reason, finished_at)
		values ($1, 'acme', 'g', 'h', 'running', '{}', now(), 'max_claim_attempts_exceeded', null),
		       ($2, 'acme', 'g', 'h', 'done', '{}', null, null, now()),
		       ($3, 'acme', 'g', 'h', 'waiting', '{}', null, null, null)`,
		runPoisoned, runFinished, runWaiting)
	return env
}

// newRun is a valid run of acme that is due now.
func newRun(runID string) docket.NewRun {
	return docket.NewRun{RunID: runID, Scope: acme, GraphID: "g", GraphHash: "h", State: json.RawMessage(`{"n":1}`)}
}

// begin opens a transaction on the counting pool for a Tx call and resets
// the statement count, so only the call's own statements count. The runner
// rolls it back.
func (env *inputEnv) begin(ctx context.Context, opts pgx.TxOptions) pgx.Tx {
	env.t.Helper()
	tx, err := env.pool.BeginTx(ctx, opts)
	if err != nil {
		env.t.Fatalf("begin: %v", err)
	}
	env.tx = tx
	env.counter.n.Store(0)
	return tx
}

// runInputCases runs every case against env and returns how many were
// tried and how many were refused before any statement.
func runInputCases(t *testing.T, env *inputEnv, cases []inputCase) (tried, local int) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env.t = t
			before := testkit.Snap(t, env.super)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if c.cancelled {
				cancel()
			}
			env.counter.n.Store(0)
			err := c.call(ctx, env)
			sent := env.counter.n.Load()
			if env.tx != nil {
				_ = env.tx.Rollback(context.Background())
				env.tx = nil
			}
			expectInputError(t, c, err)
			if c.local && sent != 0 {
				t.Errorf("sent %d statement(s) before refusing, want none", sent)
			}
			testkit.ExpectUnchanged(t, c.name, before, testkit.Snap(t, env.super))
		})
		tried++
		if c.local {
			local++
		}
	}
	return tried, local
}

// expectInputError checks err against the case's expectation.
func expectInputError(t *testing.T, c inputCase, err error) {
	t.Helper()
	switch {
	case c.reason != "":
		testkit.ClaimExpectUnavailable(t, err, c.reason)
	case len(c.want) == 0 && err != nil:
		t.Fatalf("error %v, want success without writes", err)
	case len(c.want) == 0:
	case err == nil:
		t.Fatalf("no error, want %v", c.want)
	}
	for _, want := range c.want {
		if !errors.Is(err, want) {
			t.Fatalf("error %v does not match %v", err, want)
		}
	}
	if c.mentions != "" && !strings.Contains(err.Error(), c.mentions) {
		t.Fatalf("error %q does not name %q", err, c.mentions)
	}
}

// Oversized and malformed values shared by the cases.
var (
	longID     = strings.Repeat("x", docket.MaxIdentifierBytes+1)
	hugeState  = json.RawMessage(`"` + strings.Repeat("a", docket.MaxStateBytes) + `"`)
	badUTF8    = "bad\xff\xfeid"
	overflow   = int(1) << 31 // 2147483648
	minInt     = -int(^uint(0)>>1) - 1
	unknownRun = "no-such-run"
)

// errHardDecide is the error a refusing decide function returns.
var errHardDecide = errors.New("decide refused")

func TestBadInputMatrix(t *testing.T) {
	t.Parallel()
	env := newHardInputEnv(t)
	var groups = []struct {
		name  string
		cases []inputCase
	}{
		{"config", configCases()},
		{"claim", claimCases()},
		{"insert", insertCases()},
		{"read", readCases()},
		{"holder", holderCases()},
		{"commit", commitCases()},
		{"abandon", abandonCases()},
		{"mutate", mutateCases()},
		{"admin", adminCases()},
		{"time", timeCases()},
	}
	tried, local := 0, 0
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			n, l := runInputCases(t, env, g.cases)
			tried, local = tried+n, local+l
		})
	}
	t.Logf("bad inputs tried: %d across %d groups (%d refused before any statement); writes: 0", tried, len(groups), local)
	if tried < 150 {
		t.Fatalf("only %d bad inputs tried", tried)
	}
}

// newHardUninitializedEnv is a domain no TenantFair client ever started: a
// Legacy client and an Admin, both under tenant mode none.
func newHardUninitializedEnv(t *testing.T) *inputEnv {
	t.Helper()
	databaseURL := pgtest.NewDatabase(t)
	env := &inputEnv{t: t, super: testkit.PoolFor(t, databaseURL), counter: &queryCounter{}}
	cfg := testkit.PoolConfig(t, databaseURL, 4)
	cfg.ConnConfig.Tracer = env.counter
	env.pool = testkit.Pool(t, cfg)
	env.client = testkit.OpenClient(t, env.pool, testkit.LegacyConfig())
	admin, err := docket.NewAdmin(testkit.Context(t), env.pool, docket.AdminConfig{})
	if err != nil {
		t.Fatalf("NewAdmin: %v", err)
	}
	env.admin = admin
	if _, err := env.client.InsertRun(testkit.Context(t), docket.NewRun{RunID: "legacy-run", GraphID: "g", GraphHash: "h", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	return env
}

func TestBadInputUninitializedDomain(t *testing.T) {
	t.Parallel()
	env := newHardUninitializedEnv(t)
	cases := []inputCase{
		{name: "PutClaimPolicyDefault before initialization", want: []error{docket.ErrNotInitialized},
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.admin.PutClaimPolicyDefault(ctx, 3, docket.ClaimPolicyWriteOptions{})
				return err
			}},
		{name: "InspectClaimPolicy of a new tenant before initialization", want: []error{docket.ErrNotInitialized},
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.admin.InspectClaimPolicy(ctx, docket.Tenant("nobody-yet"))
				return err
			}},
		{name: "InspectClaimPolicy of the tenantless scope before initialization", want: []error{docket.ErrNotInitialized},
			call: func(ctx context.Context, env *inputEnv) error {
				_, err := env.admin.InspectClaimPolicy(ctx, docket.Tenantless)
				return err
			}},
		{name: "Legacy ClaimDue negative ClaimTTL", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				req := goodClaim()
				req.ClaimTTL = -time.Second
				_, err := env.client.ClaimDue(ctx, req)
				return err
			}},
		{name: "Legacy ClaimDue Limit 0", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				req := goodClaim()
				req.Limit = 0
				_, err := env.client.ClaimDue(ctx, req)
				return err
			}},
		{name: "Legacy InsertRun empty tenant", want: []error{docket.ErrInvalidArgument}, local: true,
			call: func(ctx context.Context, env *inputEnv) error {
				run := newRun("fresh-run")
				run.Scope = docket.Tenant("")
				_, err := env.client.InsertRun(ctx, run)
				return err
			}},
	}
	tried, local := runInputCases(t, env, cases)
	t.Logf("bad inputs tried: %d (%d refused before any statement); writes: 0", tried, local)
}
