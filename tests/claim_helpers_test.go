package tests

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
	"github.com/docketrun/docket-go/internal/pgtest"
	"github.com/docketrun/docket-go/policy"
)

// clBase is the logical clock of the claim tests: runs are due relative to it
// and every claim call passes clBase (or a later time) as Now.
var clBase = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// clTTL is the orphan TTL of the claim tests: a claim taken at clBase - clTTL
// or earlier is expired at clBase.
const clTTL = time.Hour

// clMaxAttempts is the default MaxClaimAttempts: high enough that nothing is
// poisoned unless a test raises claim_attempts on purpose.
const clMaxAttempts = 1000

// clEnv is one claim test database with a client of one engine.
type clEnv struct {
	t      testing.TB
	pool   *pgxpool.Pool
	client *docket.Client
}

// newClTenantFair opens a fresh database with a TenantFair client at defaultCap.
func newClTenantFair(t testing.TB, defaultCap int) *clEnv {
	t.Helper()
	pool := newPool(t)
	return &clEnv{t: t, pool: pool, client: openClient(t, pool, tenantFairConfig(defaultCap))}
}

// newClLegacy opens a fresh database with a Legacy client.
func newClLegacy(t testing.TB) *clEnv {
	t.Helper()
	pool := newPool(t)
	return &clEnv{t: t, pool: pool, client: openClient(t, pool, legacyConfig())}
}

// clPoolWithSize returns a pool of up to size connections on a fresh
// migrated database, closed when the test ends.
func clPoolWithSize(t testing.TB, size int32) *pgxpool.Pool {
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

// clTenantArg maps "" to the tenantless NULL.
func clTenantArg(tenant string) any {
	if tenant == "" {
		return nil
	}
	return tenant
}

// due inserts a running run of tenant that is due at wake.
func (e *clEnv) due(tenant, runID string, wake time.Time) {
	e.t.Helper()
	execSQL(e.t, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		values ($1, $2, 'g', 'h1', 'running', '{}', $3)`, runID, clTenantArg(tenant), wake)
}

// dueMany inserts n due runs of tenant named prefix-1..prefix-n, one second
// apart starting at first, and returns their run ids in FIFO order.
func (e *clEnv) dueMany(tenant, prefix string, n int, first time.Time) []string {
	e.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i+1)
		e.due(tenant, ids[i], first.Add(time.Duration(i)*time.Second))
	}
	return ids
}

// claimed inserts a running run of tenant that holds a claim taken at
// claimedAt; admitted says whether it also holds an admission marker.
func (e *clEnv) claimed(tenant, runID string, claimedAt time.Time, admitted bool) {
	e.t.Helper()
	var marker any
	if admitted {
		marker = claimedAt
	}
	execSQL(e.t, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state,
			claim_token, claimed_at, claim_attempts, tenant_admitted_at)
		values ($1, $2, 'g', 'h1', 'running', '{}', gen_random_uuid(), $3, 1, $4)`,
		runID, clTenantArg(tenant), claimedAt, marker)
}

// waiting inserts a run of tenant parked as waiting.
func (e *clEnv) waiting(tenant, runID string) {
	e.t.Helper()
	execSQL(e.t, e.pool, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state)
		values ($1, $2, 'g', 'h1', 'waiting', '{}')`, runID, clTenantArg(tenant))
}

// markAdmitted gives due runs an admission marker, making them admitted-ready.
func (e *clEnv) markAdmitted(runIDs ...string) {
	e.t.Helper()
	execSQL(e.t, e.pool, `update docket_runs set tenant_admitted_at = wake_at where run_id = any($1)`, runIDs)
}

// setAttempts sets claim_attempts of a run (to make it a poison candidate).
func (e *clEnv) setAttempts(runID string, attempts int) {
	e.t.Helper()
	execSQL(e.t, e.pool, `update docket_runs set claim_attempts = $2 where run_id = $1`, runID, attempts)
}

// finish completes a run with plain SQL, clearing claim and marker.
func (e *clEnv) finish(runIDs ...string) {
	e.t.Helper()
	execSQL(e.t, e.pool, `update docket_runs
		   set status = 'done', finished_at = now(), claim_token = null, claimed_at = null,
		       wake_at = null, tenant_admitted_at = null
		 where run_id = any($1)`, runIDs)
}

// release clears a run's claim and makes it due at wake, keeping its marker
// (the cooperative release of the lifecycle table).
func (e *clEnv) release(runID string, wake time.Time) {
	e.t.Helper()
	execSQL(e.t, e.pool, `update docket_runs set claim_token = null, claimed_at = null, wake_at = $2
		 where run_id = $1`, runID, wake)
}

// setOverride sets (or with capValue 0 clears) the cap override of tenant.
func (e *clEnv) setOverride(tenant string, capValue int) {
	e.t.Helper()
	var v any
	if capValue > 0 {
		v = capValue
	}
	execSQL(e.t, e.pool, `update docket_claim_partitions set max_active = $2 where scope_key = $1`, tenant, v)
}

// claimReq is a claim request at now with the test TTL and attempt limit.
func clReq(now time.Time, limit int, pref docket.Preference) docket.ClaimRequest {
	return docket.ClaimRequest{Now: now, Limit: limit, OrphanTTL: clTTL, MaxClaimAttempts: clMaxAttempts, Preference: pref}
}

// trace runs a traced claim and fails the test on error.
func (e *clEnv) trace(req docket.ClaimRequest) docket.ClaimTrace {
	e.t.Helper()
	tr, err := e.client.TraceClaimDue(testContext(e.t), req)
	if err != nil {
		e.t.Fatalf("trace claim %+v: %v", req, err)
	}
	return tr
}

// cursor is the durable scan_ring_position.
func (e *clEnv) cursor() int64 {
	e.t.Helper()
	return queryInt64(e.t, e.pool, `select scan_ring_position from docket_claim_policy where id = 1`)
}

// position is the ring position of tenant's partition.
func (e *clEnv) position(tenant string) int64 {
	e.t.Helper()
	return queryInt64(e.t, e.pool, `select ring_position from docket_claim_schedule where scope_key = $1`, tenant)
}

// epochs maps every scope key to its admission_epoch.
func (e *clEnv) epochs() map[string]int64 {
	e.t.Helper()
	rows, err := e.pool.Query(testContext(e.t), `select scope_key, admission_epoch from docket_claim_partitions`)
	if err != nil {
		e.t.Fatalf("epochs: %v", err)
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
		e.t.Fatalf("epochs: %v", err)
	}
	m := make(map[string]int64, len(out))
	for _, kv := range out {
		m[kv.k] = kv.v
	}
	return m
}

// admitted counts the marked healthy running runs of tenant.
func (e *clEnv) admitted(tenant string) int64 {
	e.t.Helper()
	return queryInt64(e.t, e.pool, `select count(*) from docket_runs
		where scope_key = $1 and tenant_admitted_at is not null and status = 'running' and poisoned_at is null`, tenant)
}

// liveClaims counts the claimed runs of tenant.
func (e *clEnv) liveClaims(tenant string) int64 {
	e.t.Helper()
	return queryInt64(e.t, e.pool, `select count(*) from docket_runs where scope_key = $1 and claim_token is not null`, tenant)
}

// clRunState is the claim-relevant state of one run.
type clRunState struct {
	Claimed  bool
	Marked   bool
	Poisoned bool
	Attempts int
}

// state reads the claim-relevant state of runID.
func (e *clEnv) state(runID string) clRunState {
	e.t.Helper()
	var s clRunState
	err := e.pool.QueryRow(testContext(e.t), `select claim_token is not null, tenant_admitted_at is not null,
			poisoned_at is not null, claim_attempts
		  from docket_runs where run_id = $1`, runID).Scan(&s.Claimed, &s.Marked, &s.Poisoned, &s.Attempts)
	if err != nil {
		e.t.Fatalf("state of %s: %v", runID, err)
	}
	return s
}

// snapshot is every claim-relevant column of every run plus the cursor and
// the epochs, for "nothing changed" assertions.
func (e *clEnv) snapshot() string {
	e.t.Helper()
	var runs string
	err := e.pool.QueryRow(testContext(e.t), `select coalesce(string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s',
			run_id, claim_token, claimed_at, wake_at, tenant_admitted_at, claim_attempts, poisoned_at, updated_at),
			';' order by id), '') from docket_runs`).Scan(&runs)
	if err != nil {
		e.t.Fatalf("snapshot: %v", err)
	}
	return fmt.Sprintf("cursor=%d epochs=%v runs=%s", e.cursor(), e.epochs(), runs)
}

// holdLock opens a transaction on a connection of its own (outside the
// client's pool) that runs lockSQL and keeps the lock until the returned
// function, also run at cleanup, rolls it back.
func (e *clEnv) holdLock(lockSQL string, args ...any) (release func()) {
	e.t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig.Copy())
	if err != nil {
		e.t.Fatalf("connect lock holder: %v", err)
	}
	tx, err := conn.Begin(ctx)
	if err == nil {
		_, err = tx.Exec(ctx, lockSQL, args...)
	}
	if err != nil {
		_ = conn.Close(ctx)
		e.t.Fatalf("hold lock %q: %v", lockSQL, err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			_ = tx.Rollback(ctx)
			_ = conn.Close(ctx)
		}
	}
	e.t.Cleanup(release)
	return release
}

// holdRun locks the given runs from another connection.
func (e *clEnv) holdRun(runIDs ...string) (release func()) {
	e.t.Helper()
	return e.holdLock(`select 1 from docket_runs where run_id = any($1) for update`, runIDs)
}

// holdPartition locks tenant's partition row from another connection.
func (e *clEnv) holdPartition(tenant string) (release func()) {
	e.t.Helper()
	return e.holdLock(`select 1 from docket_claim_partitions where scope_key = $1 for no key update`, tenant)
}

// clOutcomeIDs lists the run ids of a trace's outcomes in commit order.
func clOutcomeIDs(tr docket.ClaimTrace) []string {
	ids := make([]string, len(tr.Outcomes))
	for i, o := range tr.Outcomes {
		ids[i] = o.RunID
	}
	return ids
}

// clDispositions lists the inspection dispositions of a trace.
func clDispositions(tr docket.ClaimTrace) []policy.Disposition {
	out := make([]policy.Disposition, len(tr.Inspections))
	for i, in := range tr.Inspections {
		out[i] = in.Disposition
	}
	return out
}

// clPositions lists the visited ring positions of a trace.
func clPositions(tr docket.ClaimTrace) []int64 {
	out := make([]int64, len(tr.Inspections))
	for i, in := range tr.Inspections {
		out[i] = in.RingPosition
	}
	return out
}

// expectContiguous checks the cursor contract of one call: visit ordinals
// 1..n, each visit starts where the previous ended (the first at start), and
// cursor_after is the visited position.
func clExpectContiguous(t testing.TB, tr docket.ClaimTrace, start int64) {
	t.Helper()
	prev := start
	for i, in := range tr.Inspections {
		if in.Visit != i+1 || in.CursorBefore != prev || in.CursorAfter != in.RingPosition {
			t.Fatalf("inspection %d = %+v, want visit %d starting at cursor %d", i, in, i+1, prev)
		}
		prev = in.CursorAfter
	}
}

// clExpectIDs compares run id lists.
func clExpectIDs(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// clExpectUnavailable checks that err is a *ClaimPolicyUnavailableError with reason.
func clExpectUnavailable(t testing.TB, err error, reason string) {
	t.Helper()
	unavailable, ok := errors.AsType[*docket.ClaimPolicyUnavailableError](err)
	if !ok || unavailable.Reason != reason {
		t.Fatalf("claim error = %v, want ClaimPolicyUnavailableError %s", err, reason)
	}
}

// clRepeat returns n copies of v.
func clRepeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}
