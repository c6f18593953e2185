package claim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// claimReq is the claim every fault test interrupts: enough demand for
// leases in several partitions, an expired steal and a poison.
var claimReq = testkit.ClaimReq(testkit.ClaimBase, 8, docket.PreferNone)

// faultEnv is a seeded TenantFair domain plus a victim client whose pool
// holds exactly one connection, so the victim's backend can be found and
// ended.
type faultEnv struct {
	*testkit.ClaimEnv
	victimPool *pgxpool.Pool
	victim     *docket.Client
	// dryRun is what claimReq does on the seeded domain, measured in a
	// transaction that was rolled back.
	dryRun claimSummary
}

// newHardFaultEnv seeds a domain where claimReq promotes, reacquires,
// steals and poisons across three partitions, and measures its dry run.
func newHardFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	e := testkit.NewClaimTenantFair(t, 2)
	e.DueMany("a", "a", 3, testkit.ClaimBase.Add(-3*time.Hour))
	e.Claimed("b", "b-expired", testkit.ClaimBase.Add(-2*time.Hour), true)
	e.Due("b", "b-1", testkit.ClaimBase.Add(-time.Hour))
	e.Due("c", "c-poison", testkit.ClaimBase.Add(-time.Hour))
	e.SetAttempts("c-poison", testkit.ClaimMaxAttempts)
	e.Due("c", "c-1", testkit.ClaimBase.Add(-time.Minute))
	e.Waiting("c", "c-waiting")

	victimPool := testkit.Pool(t, testkit.PoolConfig(t, e.Pool.Config().ConnString(), 1))
	env := &faultEnv{ClaimEnv: e, victimPool: victimPool, victim: testkit.OpenClient(t, victimPool, testkit.TenantFairConfig(2))}

	ctx := testkit.Context(t)
	tx, err := e.Pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin dry run: %v", err)
	}
	tr, err := e.Client.TraceClaimDueTx(ctx, tx, claimReq)
	if rbErr := tx.Rollback(ctx); err == nil {
		err = rbErr
	}
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	env.dryRun = summarize(tr)
	if env.dryRun.leases == 0 || env.dryRun.poisons != 1 || !slices.Contains(env.dryRun.outcomes, "b-expired") {
		t.Fatalf("dry run %+v: want leases, one poison and the expired steal", env.dryRun)
	}
	return env
}

// claimSummary is the token-free essence of one claim call.
type claimSummary struct {
	outcomes     []string
	dispositions []string
	positions    []int64
	cursorBefore int64
	leases       int
	poisons      int
}

func summarize(tr docket.ClaimTrace) claimSummary {
	s := claimSummary{
		outcomes:  testkit.ClaimOutcomeIDs(tr),
		positions: positions(tr),
		leases:    len(tr.Result.Leases),
		poisons:   len(tr.Result.Poisoned),
	}
	for _, d := range dispositions(tr) {
		s.dispositions = append(s.dispositions, string(d))
	}
	if len(tr.Inspections) > 0 {
		s.cursorBefore = tr.Inspections[0].CursorBefore
	}
	return s
}

// expectDryRunRepeats runs claimReq for real and requires exactly the
// dry run's outcomes, visits and starting cursor: the interrupted call left
// nothing behind that could change what a fresh call does.
func (env *faultEnv) expectDryRunRepeats(t *testing.T) {
	t.Helper()
	tr, err := env.victim.TraceClaimDue(testkit.Context(t), claimReq)
	if err != nil {
		t.Fatalf("claim after the fault: %v", err)
	}
	got := summarize(tr)
	if fmt.Sprint(got) != fmt.Sprint(env.dryRun) {
		t.Fatalf("claim after the fault = %+v, want the dry run %+v", got, env.dryRun)
	}
}

// holdPolicy locks the singleton policy row from a connection of its own.
func (env *faultEnv) holdPolicy() (release func()) {
	return env.HoldLock(`select 1 from docket_claim_policy where id = 1 for update`)
}

func TestClaimKilledWhileWaitingForPolicy(t *testing.T) {
	t.Parallel()
	env := newHardFaultEnv(t)
	before := testkit.Snap(t, env.Pool)

	// The engine caps its policy wait at 250 ms, so the kill races the lock
	// timeout. An attempt the timeout wins must itself be a clean refusal;
	// attempts repeat until the kill lands inside the wait.
	const maxAttempts = 50
	var killed error
	timeouts := 0
	for attempt := 1; killed == nil; attempt++ {
		if attempt > maxAttempts {
			t.Fatalf("the kill never landed inside the policy wait in %d attempts", maxAttempts)
		}
		pid := testkit.BackendPID(t, env.victimPool)
		release := env.holdPolicy()
		done := make(chan error, 1)
		go func() {
			_, err := env.victim.ClaimDue(testkit.Context(t), claimReq)
			done <- err
		}()
		var err error
		terminated := false
	wait:
		for {
			select {
			case err = <-done:
				break wait
			default:
			}
			if !terminated && waitsOnLock(t, env.Pool, pid) {
				terminate(t, env.Pool, pid)
				terminated = true
			}
		}
		release()
		env.victimPool.Reset()
		testkit.ExpectUnchanged(t, fmt.Sprintf("attempt %d (error %v)", attempt, err), before, testkit.Snap(t, env.Pool))
		if testkit.GuardSQLState(err) == testkit.AdminShutdown {
			killed = err
			continue
		}
		testkit.ClaimExpectUnavailable(t, err, "lock_contention")
		timeouts++
	}
	if _, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](killed); ok {
		t.Fatalf("a killed claim reads as a policy refusal: %v", killed)
	}
	t.Logf("killed while waiting after %d lock timeouts: %v", timeouts, killed)
	env.expectDryRunRepeats(t)
}

func TestClaimKilledHoldingLocks(t *testing.T) {
	t.Parallel()
	env := newHardFaultEnv(t)
	before := testkit.Snap(t, env.Pool)
	ctx := testkit.Context(t)

	conn, err := env.victimPool.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire victim connection: %v", err)
	}
	defer conn.Release()
	pid := conn.Conn().PgConn().PID()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	tr, err := env.victim.TraceClaimDueTx(ctx, tx, claimReq)
	if err != nil {
		t.Fatalf("claim in the victim's transaction: %v", err)
	}
	if got := summarize(tr); fmt.Sprint(got) != fmt.Sprint(env.dryRun) {
		t.Fatalf("victim's claim = %+v, want the dry run %+v", got, env.dryRun)
	}
	var lockTimeout string
	if err := tx.QueryRow(ctx, `select current_setting('lock_timeout')`).Scan(&lockTimeout); err != nil || lockTimeout != "0" {
		t.Fatalf("lock_timeout after the claim = %q, %v; want the caller's 0 restored", lockTimeout, err)
	}

	// The victim's next statement blocks, without a timeout, while it still
	// holds the policy row, its granted partitions and every leased run.
	const advisoryKey = 7171
	releaseAdvisory := env.HoldLock(`select pg_advisory_xact_lock($1)`, advisoryKey)
	blocked := make(chan error, 1)
	go func() {
		_, err := tx.Exec(ctx, `select pg_advisory_xact_lock($1)`, advisoryKey)
		blocked <- err
	}()
	testkit.MigrationAwaitLockWait(t, env.Pool, pid)

	var unlocked int64
	err = pgx.BeginFunc(ctx, env.Pool, func(probe pgx.Tx) error {
		return probe.QueryRow(ctx, `select count(*) from (select 1 from docket_runs
			where run_id = any($1) for update skip locked) s`, env.dryRun.outcomes).Scan(&unlocked)
	})
	if err != nil || unlocked != 0 {
		t.Fatalf("%d of the leased runs are unlocked mid-transaction (%v), want 0", unlocked, err)
	}
	_, err = env.Client.ClaimDue(ctx, claimReq)
	testkit.ClaimExpectUnavailable(t, err, "lock_contention")

	terminate(t, env.Pool, pid)
	err = <-blocked
	if testkit.GuardSQLState(err) != testkit.AdminShutdown {
		t.Fatalf("blocked statement after the kill: %v, want SQLSTATE %s", err, testkit.AdminShutdown)
	}
	// The dead connection goes back to the pool, which discards it.
	conn.Release()
	releaseAdvisory()
	testkit.ExpectUnchanged(t, "a claim transaction killed while holding its locks", before, testkit.Snap(t, env.Pool))
	env.expectDryRunRepeats(t)
}

func TestClaimStatementTimeout(t *testing.T) {
	t.Parallel()
	env := newHardFaultEnv(t)
	before := testkit.Snap(t, env.Pool)
	ctx := testkit.Context(t)
	release := env.holdPolicy()

	// Inside the caller's transaction: a statement_timeout below the
	// engine's 250 ms policy wait ends the call first.
	err := pgx.BeginFunc(ctx, env.victimPool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `set local statement_timeout = '50ms'`); err != nil {
			return fmt.Errorf("set statement_timeout: %w", err)
		}
		_, err := env.victim.ClaimDueTx(ctx, tx, claimReq)
		return err
	})
	expectStatementTimeout(t, "ClaimDueTx", err)

	// Without a transaction: a session statement_timeout on the client's
	// connection.
	if _, err := env.victimPool.Exec(ctx, `set statement_timeout = '50ms'`); err != nil {
		t.Fatalf("set statement_timeout: %v", err)
	}
	_, err = env.victim.ClaimDue(ctx, claimReq)
	expectStatementTimeout(t, "ClaimDue", err)
	if _, err := env.victimPool.Exec(ctx, `reset statement_timeout`); err != nil {
		t.Fatalf("reset statement_timeout: %v", err)
	}

	release()
	testkit.ExpectUnchanged(t, "claims ended by statement_timeout", before, testkit.Snap(t, env.Pool))
	env.expectDryRunRepeats(t)
}

// expectStatementTimeout requires the documented shape of a claim ended
// by statement_timeout: the server's error, SQLSTATE 57014, wrapped, and no
// engine refusal or invalid-argument sentinel.
func expectStatementTimeout(t *testing.T, what string, err error) {
	t.Helper()
	if testkit.GuardSQLState(err) != testkit.QueryCanceled {
		t.Fatalf("%s under statement_timeout: %v, want SQLSTATE %s", what, err, testkit.QueryCanceled)
	}
	if _, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err); ok || errors.Is(err, docket.ErrInvalidArgument) {
		t.Fatalf("%s under statement_timeout reads as a refusal: %v", what, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s under statement_timeout reads as a context error: %v", what, err)
	}
}
