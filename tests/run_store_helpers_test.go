package tests

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// rsStore is one run store under test: a TenantFair client on a fresh
// database and a pool for independent SQL reads.
type rsStore struct {
	t      *testing.T
	pool   *pgxpool.Pool
	client *docket.Client
}

// newRSStore opens a TenantFair client (required tenancy) with defaultCap.
func newRSStore(t *testing.T, defaultCap int) *rsStore {
	t.Helper()
	pool := newPool(t)
	return &rsStore{t: t, pool: pool, client: openClient(t, pool, tenantFairConfig(defaultCap))}
}

// insert adds a due run for tenant and returns it.
func (s *rsStore) insert(tenant, runID string) docket.Run {
	s.t.Helper()
	run, err := s.client.InsertRun(testContext(s.t), docket.NewRun{
		RunID: runID, Scope: docket.Tenant(tenant), GraphID: "graph", GraphHash: "v1",
		State: json.RawMessage(`{"n":0}`),
	})
	if err != nil {
		s.t.Fatalf("insert %s: %v", runID, err)
	}
	return run
}

// rsLease is what a test keeps of one lease: the holder and its sequence.
type rsLease struct {
	holder docket.Holder
	seq    int64
}

// rsRow is the database's own view of one run plus its scope's unfinished
// count, read with plain SQL so assertions do not trust the code under test.
type rsRow struct {
	Status       string
	Token        *string
	ClaimedAt    *time.Time
	WakeAt       *time.Time
	AdmittedAt   *time.Time
	PoisonedAt   *time.Time
	PoisonReason *string
	FinishedAt   *time.Time
	Attempts     int32
	Abandons     int32
	Seq          int64
	UpdatedAt    time.Time
	Unfinished   int64
}

// row reads runID's row and its scope's unfinished_count.
func (s *rsStore) row(runID string) rsRow {
	s.t.Helper()
	var r rsRow
	err := s.pool.QueryRow(testContext(s.t), `
		select r.status, r.claim_token::text, r.claimed_at, r.wake_at, r.tenant_admitted_at,
		       r.poisoned_at, r.poison_reason, r.finished_at, r.claim_attempts, r.claim_abandons,
		       r.checkpoint_seq, r.updated_at, s.unfinished_count
		  from docket_runs r join docket_claim_schedule s using (scope_key)
		 where r.run_id = $1`, runID).Scan(
		&r.Status, &r.Token, &r.ClaimedAt, &r.WakeAt, &r.AdmittedAt,
		&r.PoisonedAt, &r.PoisonReason, &r.FinishedAt, &r.Attempts, &r.Abandons,
		&r.Seq, &r.UpdatedAt, &r.Unfinished)
	if err != nil {
		s.t.Fatalf("read run %s: %v", runID, err)
	}
	return r
}

// dbNow returns the database clock.
func (s *rsStore) dbNow() time.Time {
	s.t.Helper()
	var now time.Time
	if err := s.pool.QueryRow(testContext(s.t), `select now()`).Scan(&now); err != nil {
		s.t.Fatalf("now: %v", err)
	}
	return now
}

// tableCounts returns the row counts of every Docket table.
func (s *rsStore) tableCounts() [4]int64 {
	s.t.Helper()
	var c [4]int64
	for i, table := range []string{"docket_runs", "docket_claim_partitions", "docket_claim_schedule", "docket_claim_policy"} {
		c[i] = queryInt64(s.t, s.pool, "select count(*) from "+table)
	}
	return c
}

// expectClaimed fails unless r is claimed by token, admitted at admittedAt,
// unscheduled and healthy running.
func expectClaimed(t *testing.T, r rsRow, token uuid.UUID, admittedAt time.Time) {
	t.Helper()
	if r.Status != "running" || r.Token == nil || *r.Token != token.String() || r.ClaimedAt == nil ||
		r.WakeAt != nil || r.PoisonedAt != nil || r.AdmittedAt == nil || !r.AdmittedAt.Equal(admittedAt) {
		t.Fatalf("want running, claimed by %s, admitted at %s, no wake: got %+v", token, admittedAt, r)
	}
}

// expectUnclaimed fails unless r holds no claim.
func expectUnclaimed(t *testing.T, r rsRow) {
	t.Helper()
	if r.Token != nil || r.ClaimedAt != nil {
		t.Fatalf("want no claim, got token %v claimed_at %v", r.Token, r.ClaimedAt)
	}
}

// expectNoMarker fails unless r holds no admission marker.
func expectNoMarker(t *testing.T, r rsRow) {
	t.Helper()
	if r.AdmittedAt != nil {
		t.Fatalf("want no admission marker, got %s", r.AdmittedAt)
	}
}

// expectSameTime fails unless got is non-nil and equal to want.
func expectSameTime(t *testing.T, what string, got *time.Time, want time.Time) {
	t.Helper()
	if got == nil || !got.Equal(want) {
		t.Fatalf("%s: want %s, got %v", what, want, got)
	}
}

// expectErrorIs fails unless errors.Is(err, target).
func expectErrorIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: want %v, got %v", what, target, err)
	}
}

// expectRowUnchanged fails unless the row is exactly as before.
func expectRowUnchanged(t *testing.T, what string, before, after rsRow) {
	t.Helper()
	if !rsRowsEqual(before, after) {
		t.Fatalf("%s changed the run:\nbefore %+v\nafter  %+v", what, before, after)
	}
}

func rsRowsEqual(a, b rsRow) bool {
	return a.Status == b.Status && eqStr(a.Token, b.Token) && eqTime(a.ClaimedAt, b.ClaimedAt) &&
		eqTime(a.WakeAt, b.WakeAt) && eqTime(a.AdmittedAt, b.AdmittedAt) &&
		eqTime(a.PoisonedAt, b.PoisonedAt) && eqStr(a.PoisonReason, b.PoisonReason) &&
		eqTime(a.FinishedAt, b.FinishedAt) && a.Attempts == b.Attempts && a.Abandons == b.Abandons &&
		a.Seq == b.Seq && a.UpdatedAt.Equal(b.UpdatedAt) && a.Unfinished == b.Unfinished
}

func eqStr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func eqTime(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

// expectAdmission fails unless InspectRun derives want for runID.
func (s *rsStore) expectAdmission(tenant, runID string, want docket.AdmissionState) {
	s.t.Helper()
	got, err := s.client.InspectRun(testContext(s.t), docket.Tenant(tenant), runID)
	if err != nil {
		s.t.Fatalf("inspect %s: %v", runID, err)
	}
	if got.State != want {
		s.t.Fatalf("admission state of %s: want %s, got %s (%+v)", runID, want, got.State, got)
	}
}

// dueAt returns runID's wake time, failing when it has none.
func (s *rsStore) dueAt(runID string) time.Time {
	s.t.Helper()
	r := s.row(runID)
	if r.WakeAt == nil {
		s.t.Fatalf("run %s has no wake time: %+v", runID, r)
	}
	return *r.WakeAt
}

// claim claims runID at the database clock.
func (s *rsStore) claim(tenant, runID string) rsLease {
	s.t.Helper()
	return s.claimAt(tenant, runID, s.dbNow())
}

// claimAt makes one demand-one claim call as of now and fails unless it
// leases exactly runID of tenant.
func (s *rsStore) claimAt(tenant, runID string, now time.Time) rsLease {
	s.t.Helper()
	res := s.claimDue(now, time.Hour, 100)
	if len(res.Leases) != 1 || len(res.Poisoned) != 0 || res.Leases[0].RunID != runID || res.Leases[0].Scope != docket.Tenant(tenant) {
		s.t.Fatalf("claim at %s: want one lease of %s/%s, got %+v", now, tenant, runID, res)
	}
	return rsLease{holder: res.Leases[0].Holder(), seq: res.Leases[0].CheckpointSeq}
}

// claimDue makes one demand-one claim call through ClaimDue.
func (s *rsStore) claimDue(now time.Time, orphanTTL time.Duration, maxAttempts int) docket.ClaimResult {
	s.t.Helper()
	res, err := s.client.ClaimDue(testContext(s.t), docket.ClaimRequest{
		Now: now, Limit: 1, OrphanTTL: orphanTTL, MaxClaimAttempts: maxAttempts,
	})
	if err != nil {
		s.t.Fatalf("claim due at %s: %v", now, err)
	}
	return res
}
