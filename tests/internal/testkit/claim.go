package testkit

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
	"github.com/docketrun/docket-go/tests/internal/pgtest"
)

// ClaimBase is the logical clock of the claim tests: runs are due relative to it
// and every claim call passes ClaimBase (or a later time) as Now.
var ClaimBase = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// ClaimTTL is the orphan TTL of the claim tests: a claim taken at ClaimBase - ClaimTTL
// or earlier is expired at ClaimBase.
const ClaimTTL = time.Hour

// ClaimMaxAttempts is the default MaxClaimAttempts: high enough that nothing is
// poisoned unless a test raises claim_attempts on purpose.
const ClaimMaxAttempts = 1000

// ClaimEnv is one claim test database with a client of one engine.
type ClaimEnv struct {
	T      testing.TB
	Pool   *pgxpool.Pool
	Client *docket.Client
	// WalkParks makes the run helpers (Due, Waiting, Poisoned, Claimed) leave
	// the partition awake, so the walk's park is what parks it: see
	// NewClaimWalkParked.
	WalkParks bool
}

// NewClaimTenantFair opens a fresh database with a TenantFair client at defaultCap.
func NewClaimTenantFair(t testing.TB, defaultCap int) *ClaimEnv {
	t.Helper()
	pool := NewPool(t)
	return &ClaimEnv{T: t, Pool: pool, Client: OpenClient(t, pool, TenantFairConfig(defaultCap))}
}

// NewClaimLegacy opens a fresh database with a Legacy client.
func NewClaimLegacy(t testing.TB) *ClaimEnv {
	t.Helper()
	pool := NewPool(t)
	return &ClaimEnv{T: t, Pool: pool, Client: OpenClient(t, pool, LegacyConfig())}
}

// ClaimPoolWithSize returns a pool of up to size connections on a fresh
// migrated database, closed when the test ends.
func ClaimPoolWithSize(t testing.TB, size int32) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = size
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// ClaimTenantArg maps "" to the tenantless NULL.
func ClaimTenantArg(tenant string) any {
	if tenant == "" {
		return nil
	}
	return tenant
}

// due inserts a running run of tenant that is due at wake.
func (e *ClaimEnv) Due(tenant, runID string, wake time.Time) {
	e.T.Helper()
	e.insertRun(tenant, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		values ($1, $2, 'g', 'h1', 'running', '{}', $3)`, runID, ClaimTenantArg(tenant), wake)
}

// insertRun runs the insert sql of one run of tenant. With WalkParks it runs
// inside a transaction in which a run of tenant that is due for the database
// clock exists from before the insert until after it, so the partition is
// never empty when the run arrives and the insert trigger does not park it
// (the state a partition is in when its due work finished and left only
// later work).
func (e *ClaimEnv) insertRun(tenant, sql string, args ...any) {
	e.T.Helper()
	if !e.WalkParks {
		ExecSQL(e.T, e.Pool, sql, args...)
		return
	}
	ctx := Context(e.T)
	err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
			values ('walk-parks-awake', $1, 'g', 'h1', 'running', '{}', now() - interval '1 hour')`, ClaimTenantArg(tenant)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `delete from docket_runs where run_id = 'walk-parks-awake'`)
		return err
	})
	if err != nil {
		e.T.Fatalf("exec %q keeping the partition awake: %v", sql, err)
	}
}

// dueMany inserts n due runs of tenant named prefix-1..prefix-n, one second
// apart starting at first, and returns their run ids in FIFO order.
func (e *ClaimEnv) DueMany(tenant, prefix string, n int, first time.Time) []string {
	e.T.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i+1)
		e.Due(tenant, ids[i], first.Add(time.Duration(i)*time.Second))
	}
	return ids
}

// claimed inserts a running run of tenant that holds a claim taken at
// claimedAt; admitted says whether it also holds an admission marker.
func (e *ClaimEnv) Claimed(tenant, runID string, claimedAt time.Time, admitted bool) {
	e.T.Helper()
	var marker any
	if admitted {
		marker = claimedAt
	}
	e.insertRun(tenant, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state,
			claim_token, claimed_at, claim_attempts, tenant_admitted_at)
		values ($1, $2, 'g', 'h1', 'running', '{}', gen_random_uuid(), $3, 1, $4)`,
		runID, ClaimTenantArg(tenant), claimedAt, marker)
}

// waiting inserts a run of tenant parked as waiting.
func (e *ClaimEnv) Waiting(tenant, runID string) {
	e.T.Helper()
	e.insertRun(tenant, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state)
		values ($1, $2, 'g', 'h1', 'waiting', '{}')`, runID, ClaimTenantArg(tenant))
}

// markAdmitted gives due runs an admission marker, making them admitted-ready.
func (e *ClaimEnv) MarkAdmitted(runIDs ...string) {
	e.T.Helper()
	ExecSQL(e.T, e.Pool, `update docket_runs set tenant_admitted_at = wake_at where run_id = any($1)`, runIDs)
}

// setAttempts sets claim_attempts of a run (to make it a poison candidate).
func (e *ClaimEnv) SetAttempts(runID string, attempts int) {
	e.T.Helper()
	ExecSQL(e.T, e.Pool, `update docket_runs set claim_attempts = $2 where run_id = $1`, runID, attempts)
}

// finish completes a run with plain SQL, clearing claim and marker.
func (e *ClaimEnv) Finish(runIDs ...string) {
	e.T.Helper()
	ExecSQL(e.T, e.Pool, `update docket_runs
		   set status = 'done', finished_at = now(), claim_token = null, claimed_at = null,
		       wake_at = null, tenant_admitted_at = null
		 where run_id = any($1)`, runIDs)
}

// release clears a run's claim and makes it due at wake, keeping its marker
// (the cooperative release of the lifecycle table).
func (e *ClaimEnv) Release(runID string, wake time.Time) {
	e.T.Helper()
	ExecSQL(e.T, e.Pool, `update docket_runs set claim_token = null, claimed_at = null, wake_at = $2
		 where run_id = $1`, runID, wake)
}

// setOverride sets (or with capValue 0 clears) the cap override of tenant.
func (e *ClaimEnv) SetOverride(tenant string, capValue int) {
	e.T.Helper()
	var v any
	if capValue > 0 {
		v = capValue
	}
	ExecSQL(e.T, e.Pool, `update docket_claim_partitions set max_active = $2 where scope_key = $1`, tenant, v)
}

// claimReq is a claim request at now with the test TTL and attempt limit.
func ClaimReq(now time.Time, limit int, pref docket.Preference) docket.ClaimRequest {
	return docket.ClaimRequest{Now: now, Limit: limit, ClaimTTL: ClaimTTL, MaxClaimAttempts: ClaimMaxAttempts, Preference: pref}
}

// trace runs a traced claim and fails the test on error.
func (e *ClaimEnv) Trace(req docket.ClaimRequest) docket.ClaimTrace {
	e.T.Helper()
	tr, err := e.Client.TraceClaimDue(Context(e.T), req)
	if err != nil {
		e.T.Fatalf("trace claim %+v: %v", req, err)
	}
	return tr
}

// cursor is the durable scan_ring_position.
func (e *ClaimEnv) Cursor() int64 {
	e.T.Helper()
	return QueryInt64(e.T, e.Pool, `select scan_ring_position from docket_claim_policy where id = 1`)
}

// position is the ring position of tenant's partition.
func (e *ClaimEnv) Position(tenant string) int64 {
	e.T.Helper()
	return QueryInt64(e.T, e.Pool, `select ring_position from docket_claim_schedule where scope_key = $1`, tenant)
}

// epochs maps every scope key to its admission_epoch.
func (e *ClaimEnv) Epochs() map[string]int64 {
	e.T.Helper()
	rows, err := e.Pool.Query(Context(e.T), `select scope_key, admission_epoch from docket_claim_partitions`)
	if err != nil {
		e.T.Fatalf("epochs: %v", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct {
		k string
		v int64
	}, error) {
		var kv struct {
			k string
			v int64
		}
		return kv, r.Scan(&kv.k, &kv.v)
	})
	if err != nil {
		e.T.Fatalf("epochs: %v", err)
	}
	m := make(map[string]int64, len(out))
	for _, kv := range out {
		m[kv.k] = kv.v
	}
	return m
}

// admitted counts the marked healthy running runs of tenant.
func (e *ClaimEnv) Admitted(tenant string) int64 {
	e.T.Helper()
	return QueryInt64(e.T, e.Pool, `select count(*) from docket_runs
		where scope_key = $1 and tenant_admitted_at is not null and status = 'running' and poisoned_at is null`, tenant)
}

// liveClaims counts the claimed runs of tenant.
func (e *ClaimEnv) LiveClaims(tenant string) int64 {
	e.T.Helper()
	return QueryInt64(e.T, e.Pool, `select count(*) from docket_runs where scope_key = $1 and claim_token is not null`, tenant)
}

// ClaimRunState is the claim-relevant state of one run.
type ClaimRunState struct {
	Claimed  bool
	Marked   bool
	Poisoned bool
	Attempts int
}

// state reads the claim-relevant state of runID.
func (e *ClaimEnv) State(runID string) ClaimRunState {
	e.T.Helper()
	var s ClaimRunState
	err := e.Pool.QueryRow(Context(e.T), `select claim_token is not null, tenant_admitted_at is not null,
			poisoned_at is not null, claim_attempts
		  from docket_runs where run_id = $1`, runID).Scan(&s.Claimed, &s.Marked, &s.Poisoned, &s.Attempts)
	if err != nil {
		e.T.Fatalf("state of %s: %v", runID, err)
	}
	return s
}

// snapshot is every claim-relevant column of every run plus the cursor and
// the epochs, for "nothing changed" assertions.
func (e *ClaimEnv) Snapshot() string {
	e.T.Helper()
	var runs string
	err := e.Pool.QueryRow(Context(e.T), `select coalesce(string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s',
			run_id, claim_token, claimed_at, wake_at, tenant_admitted_at, claim_attempts, poisoned_at, updated_at),
			';' order by id), '') from docket_runs`).Scan(&runs)
	if err != nil {
		e.T.Fatalf("snapshot: %v", err)
	}
	return fmt.Sprintf("cursor=%d epochs=%v runs=%s", e.Cursor(), e.Epochs(), runs)
}

// holdLock opens a transaction on a connection of its own (outside the
// client's pool) that runs lockSQL and keeps the lock until the returned
// function, also run at cleanup, rolls it back.
func (e *ClaimEnv) HoldLock(lockSQL string, args ...any) (release func()) {
	e.T.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, e.Pool.Config().ConnConfig.Copy())
	if err != nil {
		e.T.Fatalf("connect lock holder: %v", err)
	}
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, lockSQL, args...)
	}
	if err != nil {
		_ = conn.Close(ctx)
		e.T.Fatalf("hold lock %q: %v", lockSQL, err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(ctx)
			_ = conn.Close(ctx)
		}
	}
	e.T.Cleanup(release)
	return release
}

// holdRun locks the given runs from another connection.
func (e *ClaimEnv) HoldRun(runIDs ...string) (release func()) {
	e.T.Helper()
	return e.HoldLock(`select 1 from docket_runs where run_id = any($1) for update`, runIDs)
}

// holdPartition locks tenant's partition row from another connection.
func (e *ClaimEnv) HoldPartition(tenant string) (release func()) {
	e.T.Helper()
	return e.HoldLock(`select 1 from docket_claim_partitions where scope_key = $1 for no key update`, tenant)
}

// ClaimOutcomeIDs lists the run ids of a trace's outcomes in commit order.
func ClaimOutcomeIDs(tr docket.ClaimTrace) []string {
	ids := make([]string, len(tr.Outcomes))
	for i, o := range tr.Outcomes {
		ids[i] = o.RunID
	}
	return ids
}

// ClaimExpectIDs compares run id lists.
func ClaimExpectIDs(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// ClaimExpectUnavailable checks that err is a *ClaimPolicyUnavailableError with reason.
func ClaimExpectUnavailable(t testing.TB, err error, reason string) {
	t.Helper()
	unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err)
	if !ok || unavailable.Reason != reason {
		t.Fatalf("claim error = %v, want ClaimPolicyUnavailableError %s", err, reason)
	}
}

// expectCapIdentity checks live claims <= admitted <= cap for tenant.
func (e *ClaimEnv) ExpectCapIdentity(tenant string, capValue int64) {
	e.T.Helper()
	live, admitted := e.LiveClaims(tenant), e.Admitted(tenant)
	if live > admitted || admitted > capValue {
		e.T.Fatalf("%s: live %d, admitted %d, cap %d: want live <= admitted <= cap", tenant, live, admitted, capValue)
	}
}

// expectRefusedInTx runs a claim inside a transaction with opts and expects
// the refusal reason and an unchanged domain.
func (e *ClaimEnv) ExpectRefusedInTx(opts pgx.TxOptions, reason string) {
	e.T.Helper()
	ctx := Context(e.T)
	before := e.Snapshot()
	tx, err := e.Pool.BeginTx(ctx, opts)
	if err != nil {
		e.T.Fatalf("begin: %v", err)
	}
	_, err = e.Client.ClaimDueTx(ctx, tx, ClaimReq(ClaimBase, 5, docket.PreferNone))
	ClaimExpectUnavailable(e.T, err, reason)
	if err := tx.Commit(ctx); err != nil {
		e.T.Fatalf("commit after the refusal: %v", err)
	}
	if e.Snapshot() != before {
		e.T.Fatal("a refused claim changed state")
	}
}

// claimWithLockTimeout claims inside a transaction whose lock_timeout is
// callerTimeout and returns the transaction's lock_timeout after the call.
func (e *ClaimEnv) ClaimWithLockTimeout(callerTimeout string) (string, error) {
	e.T.Helper()
	ctx := Context(e.T)
	var after string
	var claimErr error
	err := pgx.BeginFunc(ctx, e.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("set local lock_timeout = '%s'", callerTimeout)); err != nil {
			return err
		}
		_, claimErr = e.Client.ClaimDueTx(ctx, tx, ClaimReq(ClaimBase, 1, docket.PreferNone))
		return tx.QueryRow(ctx, "select current_setting('lock_timeout')").Scan(&after)
	})
	if err != nil {
		e.T.Fatalf("claim transaction: %v", err)
	}
	return after, claimErr
}
