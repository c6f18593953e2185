package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/pgtest"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// cancelOnDone is the pool setting docs/operations.md recommends: when
// a call's context ends, pgx sends the server a cancel request for the
// running statement, and waits up to five seconds for the server's answer
// before it closes the connection.
func cancelOnDone(cfg *pgxpool.Config) {
	cfg.ConnConfig.BuildContextWatcherHandler = func(conn *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: conn, DeadlineDelay: 5 * time.Second}
	}
}

// expiringContext is a context whose deadline passes when the test says
// so: Done closes and Err is context.DeadlineExceeded, exactly as when a
// real deadline passes, but at a point the test chose.
type expiringContext struct {
	context.Context
	done chan struct{}
	once sync.Once
}

func newHardExpiringContext() *expiringContext {
	return &expiringContext{Context: context.Background(), done: make(chan struct{})}
}

// Deadline reports a deadline, so callers see a context that has one.
func (c *expiringContext) Deadline() (time.Time, bool) { return time.Now().Add(time.Hour), true }

// Done is closed once the test expired the context.
func (c *expiringContext) Done() <-chan struct{} { return c.done }

// Err is context.DeadlineExceeded once expired.
func (c *expiringContext) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// expire lets the deadline pass.
func (c *expiringContext) expire() { c.once.Do(func() { close(c.done) }) }

// dialGate refuses new connections while closed: pgx opens one for
// each cancel request, so a closed gate is a cancel request that cannot
// reach the server (a partition, a proxy that drops it, or simply a cancel
// that arrives after the statement finished).
type dialGate struct {
	closed atomic.Bool
	dialer net.Dialer
}

// errHardDialRefused is the dial error of a closed gate.
var errHardDialRefused = errors.New("dial refused by the test")

// dial connects unless the gate is closed.
func (g *dialGate) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if g.closed.Load() {
		return nil, errHardDialRefused
	}
	return g.dialer.DialContext(ctx, network, addr)
}

// deadlineEnv is a domain with a client whose pool has one connection
// (built by configure, dialled through gate), and a second client that
// blocks it.
type deadlineEnv struct {
	pool, victimPool *pgxpool.Pool
	client, victim   *docket.Client
	gate             *dialGate
	// victimPID is the backend of the victim's latest blocked insert.
	victimPID uint32
}

func newHardDeadlineEnv(t testing.TB, configure func(*pgxpool.Config)) *deadlineEnv {
	t.Helper()
	databaseURL := pgtest.NewDatabase(t)
	env := &deadlineEnv{pool: testkit.PoolFor(t, databaseURL), gate: &dialGate{}}
	cfg := testkit.PoolConfig(t, databaseURL, 1)
	cfg.ConnConfig.DialFunc = env.gate.dial
	if configure != nil {
		configure(cfg)
	}
	env.victimPool = testkit.Pool(t, cfg)
	env.client = testkit.OpenClient(t, env.pool, testkit.TenantFairConfig(2))
	env.victim = testkit.OpenClient(t, env.victimPool, testkit.TenantFairConfig(2))
	return env
}

// deadlineRuns are the batch the tests insert, with ids of their own so
// a retry can tell whether it landed.
func deadlineRuns() []docket.NewRun {
	var runs []docket.NewRun
	for _, id := range []string{"dl-1", "dl-2", "dl-3"} {
		runs = append(runs, docket.NewRun{RunID: id, Scope: docket.Tenant("t"), GraphID: "g", GraphHash: "v1", State: json.RawMessage(`{}`)})
	}
	return runs
}

// blockedInsert starts InsertRuns of deadlineRuns on the victim while
// another transaction holds the first run id uncommitted, waits until the
// victim's statement waits for that transaction, lets the call's deadline
// pass and returns the blocker, still open, how long the call took to
// return after its deadline, and the call's error. Unless cancelReaches,
// the gate refuses the cancel request's connection.
func (env *deadlineEnv) blockedInsert(t testing.TB, cancelReaches bool) (pgx.Tx, time.Duration, error) {
	t.Helper()
	ctx := testkit.Context(t)
	pid := testkit.BackendPID(t, env.victimPool)
	env.victimPID = pid
	blocker, err := env.pool.Begin(ctx)
	if err != nil {
		t.Fatalf("begin blocker: %v", err)
	}
	t.Cleanup(func() { _ = blocker.Rollback(context.Background()) })
	if _, err := env.client.InsertRunTx(ctx, blocker, deadlineRuns()[0]); err != nil {
		t.Fatalf("blocker insert: %v", err)
	}
	callCtx := newHardExpiringContext()
	done := make(chan error, 1)
	go func() {
		_, err := env.victim.InsertRuns(callCtx, deadlineRuns())
		done <- err
	}()
	if err := testkit.AwaitActivity(ctx, env.pool, fmt.Sprintf(`exists (select 1 from pg_stat_activity where pid = %d and wait_event_type = 'Lock')`, pid), testkit.WorkerDeadline); err != nil {
		t.Fatalf("the insert waiting for the blocker: %v", err)
	}
	env.gate.closed.Store(!cancelReaches)
	expired := time.Now()
	callCtx.expire()
	select {
	case err = <-done:
	case <-time.After(testkit.WorkerDeadline):
		t.Fatalf("InsertRuns did not return after its deadline")
	}
	returned := time.Since(expired)
	if n := testkit.QueryInt64(t, env.pool, `select count(*) from docket_runs where run_id like 'dl-%'`); n != 0 {
		t.Fatalf("%d runs visible while the blocker is open, want 0", n)
	}
	return blocker, returned, err
}

// waitVictimStatement waits until the victim backend's blocked statement
// ended, whether its client is still there or not.
func (env *deadlineEnv) waitVictimStatement(t testing.TB) {
	t.Helper()
	if err := testkit.AwaitActivity(testkit.Context(t), env.pool, fmt.Sprintf(`not exists (select 1 from pg_stat_activity where pid = %d and state = 'active')`, env.victimPID), testkit.WorkerDeadline); err != nil {
		t.Fatalf("the abandoned statement to end: %v", err)
	}
}

// TestInsertRunsDeadlineLandsLater shows the default pool: the
// deadline returns DeadlineExceeded at once and closes the connection; pgx
// sends a cancel request only afterwards, in the background, and when that
// cancel does not reach the server in time the statement goes on and commits
// the whole batch once it can. A retry with the same run ids then answers
// ErrDuplicateRun: it landed.
func TestInsertRunsDeadlineLandsLater(t *testing.T) {
	t.Parallel()
	env := newHardDeadlineEnv(t, nil)
	blocker, _, err := env.blockedInsert(t, false)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("InsertRuns error %v, want context.DeadlineExceeded", err)
	}
	if err := blocker.Rollback(testkit.Context(t)); err != nil {
		t.Fatalf("rollback blocker: %v", err)
	}
	// Once the abandoned statement ran, the retry fails on its committed
	// run ids: the batch landed.
	env.waitVictimStatement(t)
	if _, err := env.client.InsertRuns(testkit.Context(t), deadlineRuns()); !errors.Is(err, docket.ErrDuplicateRun) {
		t.Fatalf("retry error %v, want ErrDuplicateRun", err)
	}
	if n := testkit.QueryInt64(t, env.pool, `select count(*) from docket_runs where run_id like 'dl-%'`); n != 3 {
		t.Fatalf("%d runs after the abandoned statement committed, want all 3", n)
	}
}

// TestInsertRunsDeadlineCancelsStatement shows the recommended
// pool (cancelOnDone): the deadline cancels the server statement, the
// call returns the server's cancellation together with
// context.DeadlineExceeded, nothing lands, the connection survives, and a
// retry with the same run ids inserts the batch.
func TestInsertRunsDeadlineCancelsStatement(t *testing.T) {
	t.Parallel()
	env := newHardDeadlineEnv(t, cancelOnDone)
	pid := testkit.BackendPID(t, env.victimPool)
	blocker, _, err := env.blockedInsert(t, true)
	if testkit.GuardSQLState(err) != testkit.QueryCanceled {
		t.Fatalf("InsertRuns error %v, want SQLSTATE %s", err, testkit.QueryCanceled)
	}
	t.Logf("InsertRuns error with the cancel handler: %v (DeadlineExceeded: %v)", err, errors.Is(err, context.DeadlineExceeded))
	if err := blocker.Rollback(testkit.Context(t)); err != nil {
		t.Fatalf("rollback blocker: %v", err)
	}
	if n := testkit.QueryInt64(t, env.pool, `select count(*) from docket_runs where run_id like 'dl-%'`); n != 0 {
		t.Fatalf("%d runs after the cancelled statement, want none", n)
	}
	if got := testkit.BackendPID(t, env.victimPool); got != pid {
		t.Errorf("victim backend %d after the cancel, want the same connection %d", got, pid)
	}
	if _, err := env.victim.InsertRuns(testkit.Context(t), deadlineRuns()); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := testkit.QueryInt64(t, env.pool, `select count(*) from docket_runs where run_id like 'dl-%'`); n != 3 {
		t.Fatalf("%d runs after the retry, want 3", n)
	}
}
