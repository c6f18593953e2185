package tests

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// Helpers of the parked-partition tests (docs/fairness-parked.md).

// parkedConfig is tenantFairConfig with parked partitions on.
func parkedConfig(defaultCap int) docket.Config {
	return docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: defaultCap, ParkDormant: true},
	}
}

// newClParked opens a fresh database with a parked-mode TenantFair client.
func newClParked(t testing.TB, defaultCap int) *clEnv {
	t.Helper()
	pool := newPool(t)
	return &clEnv{t: t, pool: pool, client: openClient(t, pool, parkedConfig(defaultCap))}
}

// parkState is the parked_until of one schedule row.
type parkState struct {
	Parked   bool
	Infinity bool
	// Until is parked_until when it is a finite time.
	Until time.Time
}

// parkOf reads the park state of tenant's schedule row.
func (e *clEnv) parkOf(tenant string) parkState {
	e.t.Helper()
	var s parkState
	var until *time.Time
	err := e.pool.QueryRow(testContext(e.t), `select parked_until is not null, coalesce(parked_until = 'infinity', false),
			case when parked_until <> 'infinity' then parked_until end
		  from docket_claim_schedule where scope_key = $1`, tenant).Scan(&s.Parked, &s.Infinity, &until)
	if err != nil {
		e.t.Fatalf("park state of %s: %v", tenant, err)
	}
	if until != nil {
		s.Until = *until
	}
	return s
}

// expectPark fails unless tenant's schedule row is in state want.
func (e *clEnv) expectPark(tenant string, want parkState) {
	e.t.Helper()
	if got := e.parkOf(tenant); got.Parked != want.Parked || got.Infinity != want.Infinity || !got.Until.Equal(want.Until) {
		e.t.Fatalf("park state of %s = %+v, want %+v", tenant, got, want)
	}
}

// awake is the park state of an awake partition.
var awake = parkState{}

// parkedUntil is the park state of a partition parked until t.
func parkedUntil(t time.Time) parkState { return parkState{Parked: true, Until: t} }

// parkedForGood is the park state of a partition parked until a write.
var parkedForGood = parkState{Parked: true, Infinity: true}

// poisoned inserts a poisoned running run of tenant.
func (e *clEnv) poisoned(tenant, runID string) {
	e.t.Helper()
	execSQL(e.t, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state,
			poisoned_at, poison_reason)
		values ($1, $2, 'g', 'h1', 'running', '{}', now(), 'max_claim_attempts_exceeded')`, runID, clTenantArg(tenant))
}

// parkViolationsQuery counts parked schedule rows that break the park
// invariant: a parked partition holds no claimed running row and no healthy
// unclaimed running row due before its parked_until. Together with the wake
// sweep (every call unparks what is due at its now first) this means no
// parked partition has a run a call could take.
const parkViolationsQuery = `select count(*) from docket_claim_schedule s
	 where s.parked_until is not null
	   and exists (select 1 from docket_runs r
	                where r.scope_key = s.scope_key and r.status = 'running' and r.poisoned_at is null
	                  and (r.claim_token is not null or r.wake_at < s.parked_until))`

// parkExpectInvariant fails when a parked partition could produce an outcome
// before its parked_until.
func parkExpectInvariant(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	if n := queryInt64(t, pool, parkViolationsQuery); n != 0 {
		t.Fatalf("%d parked partition(s) hold a claimed run or a run due before parked_until", n)
	}
}

// parkWriter is a transaction on a connection of its own, held open at an
// exact point of a test: it has written but not committed, or it waits on a
// lock.
type parkWriter struct {
	t    testing.TB
	conn *pgx.Conn
	tx   pgx.Tx
	pid  uint32
}

// newParkWriter opens the writer's connection and transaction.
func newParkWriter(t testing.TB, pool *pgxpool.Pool) *parkWriter {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatalf("connect writer: %v", err)
	}
	w := &parkWriter{t: t, conn: conn}
	if err := conn.QueryRow(ctx, `select pg_backend_pid()`).Scan(&w.pid); err != nil {
		t.Fatalf("writer pid: %v", err)
	}
	if w.tx, err = conn.Begin(ctx); err != nil {
		t.Fatalf("writer begin: %v", err)
	}
	t.Cleanup(func() {
		_ = w.tx.Rollback(ctx)
		_ = conn.Close(ctx)
	})
	return w
}

// commit commits the writer's transaction.
func (w *parkWriter) commit() {
	w.t.Helper()
	if err := w.tx.Commit(context.Background()); err != nil {
		w.t.Fatalf("writer commit: %v", err)
	}
}
