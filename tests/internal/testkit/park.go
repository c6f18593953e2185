package testkit

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
)

// ParkedConfig is TenantFairConfig with parked partitions on.
func ParkedConfig(defaultCap int) docket.Config {
	return docket.Config{
		TenantMode:  docket.TenantRequired,
		ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: defaultCap, ParkDormant: true},
	}
}

// NewClaimParked opens a fresh database with a parked-mode TenantFair client.
func NewClaimParked(t testing.TB, defaultCap int) *ClaimEnv {
	t.Helper()
	pool := NewPool(t)
	return &ClaimEnv{T: t, Pool: pool, Client: OpenClient(t, pool, ParkedConfig(defaultCap))}
}

// NewClaimWalkParked is NewClaimParked for tests of the walk's park (the
// safety net of park on write): its run helpers insert every run into a
// partition that is not empty at the insert, so no insert parks it, and the
// partition stays awake until a visit of the walk parks it. The tests'
// clock (ClaimBase) is later than the database clock, so without this every
// run they insert would park its empty partition on write.
func NewClaimWalkParked(t testing.TB, defaultCap int) *ClaimEnv {
	t.Helper()
	e := NewClaimParked(t, defaultCap)
	e.WalkParks = true
	return e
}

// ExecWalkParks runs sql (inserts of runs) so that no insert parks a
// partition on write: in one transaction that turns park_dormant off for its
// own statements and back on before it commits, so other transactions never
// see the flag change. The partitions stay awake until the walk parks them.
func (e *ClaimEnv) ExecWalkParks(sql string, args ...any) {
	e.T.Helper()
	ctx := Context(e.T)
	err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `update docket_claim_policy set park_dormant = false where id = 1`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `update docket_claim_policy set park_dormant = true where id = 1`)
		return err
	})
	if err != nil {
		e.T.Fatalf("exec %q without park on write: %v", sql, err)
	}
}

// ParkState is the parked_until of one schedule row.
type ParkState struct {
	Parked   bool
	Infinity bool
	// Until is parked_until when it is a finite time.
	Until time.Time
}

// parkOf reads the park state of tenant's schedule row.
func (e *ClaimEnv) parkOf(tenant string) ParkState {
	e.T.Helper()
	var s ParkState
	var until *time.Time
	err := e.Pool.QueryRow(Context(e.T), `select parked_until is not null, coalesce(parked_until = 'infinity', false),
			case when parked_until <> 'infinity' then parked_until end
		  from docket_claim_schedule where scope_key = $1`, tenant).Scan(&s.Parked, &s.Infinity, &until)
	if err != nil {
		e.T.Fatalf("park state of %s: %v", tenant, err)
	}
	if until != nil {
		s.Until = *until
	}
	return s
}

// expectPark fails unless tenant's schedule row is in state want.
func (e *ClaimEnv) ExpectPark(tenant string, want ParkState) {
	e.T.Helper()
	if got := e.parkOf(tenant); got.Parked != want.Parked || got.Infinity != want.Infinity || !got.Until.Equal(want.Until) {
		e.T.Fatalf("park state of %s = %+v, want %+v", tenant, got, want)
	}
}

// awake is the park state of an awake partition.
var Awake = ParkState{}

// ParkedUntil is the park state of a partition parked until t.
func ParkedUntil(t time.Time) ParkState { return ParkState{Parked: true, Until: t} }

// ParkedForGood is the park state of a partition parked until a write.
var ParkedForGood = ParkState{Parked: true, Infinity: true}

// poisoned inserts a poisoned running run of tenant.
func (e *ClaimEnv) Poisoned(tenant, runID string) {
	e.T.Helper()
	e.insertRun(tenant, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state,
			poisoned_at, poison_reason)
		values ($1, $2, 'g', 'h1', 'running', '{}', now(), 'max_claim_attempts_exceeded')`, runID, ClaimTenantArg(tenant))
}

// ParkViolationsQuery counts parked schedule rows that break the park
// invariant: a parked partition holds no claimed running row and no healthy
// unclaimed running row due before its parked_until. Together with the wake
// sweep (every call unparks what is due at its now first) this means no
// parked partition has a run a call could take.
const ParkViolationsQuery = `select count(*) from docket_claim_schedule s
	 where s.parked_until is not null
	   and exists (select 1 from docket_runs r
	                where r.scope_key = s.scope_key and r.status = 'running' and r.poisoned_at is null
	                  and (r.claim_token is not null or r.wake_at < s.parked_until))`

// ParkExpectInvariant fails when a parked partition could produce an outcome
// before its parked_until.
func ParkExpectInvariant(t testing.TB, pool *pgxpool.Pool) {
	t.Helper()
	if n := QueryInt64(t, pool, ParkViolationsQuery); n != 0 {
		t.Fatalf("%d parked partition(s) hold a claimed run or a run due before parked_until", n)
	}
}
