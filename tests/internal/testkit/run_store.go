package testkit

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
)

// RunStore is one run store under test: a TenantFair client on a fresh
// database and a pool for independent SQL reads.
type RunStore struct {
	T      *testing.T
	Pool   *pgxpool.Pool
	Client *docket.Client
}

// NewRunStore opens a TenantFair client (required tenancy) with defaultCap.
func NewRunStore(t *testing.T, defaultCap int) *RunStore {
	t.Helper()
	pool := NewPool(t)
	return &RunStore{T: t, Pool: pool, Client: OpenClient(t, pool, TenantFairConfig(defaultCap))}
}

// insert adds a due run for tenant and returns it.
func (s *RunStore) Insert(tenant, runID string) docket.Run {
	s.T.Helper()
	run, err := s.Client.InsertRun(Context(s.T), docket.NewRun{
		RunID: runID, Scope: docket.Tenant(tenant), GraphID: "graph", GraphHash: "v1",
		State: json.RawMessage(`{"n":0}`),
	})
	if err != nil {
		s.T.Fatalf("insert %s: %v", runID, err)
	}
	return run
}

// RunStoreLease is what a test keeps of one lease: the holder and its sequence.
type RunStoreLease struct {
	Holder docket.Holder
	Seq    int64
}

// RunRow is the database's own view of one run plus its scope's unfinished
// count, read with plain SQL so assertions do not trust the code under test.
type RunRow struct {
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
func (s *RunStore) Row(runID string) RunRow {
	s.T.Helper()
	var r RunRow
	err := s.Pool.QueryRow(Context(s.T), `
		select r.status, r.claim_token::text, r.claimed_at, r.wake_at, r.tenant_admitted_at,
		       r.poisoned_at, r.poison_reason, r.finished_at, r.claim_attempts, r.claim_abandons,
		       r.checkpoint_seq, r.updated_at, s.unfinished_count
		  from docket_runs r join docket_claim_schedule s using (scope_key)
		 where r.run_id = $1`, runID).Scan(
		&r.Status, &r.Token, &r.ClaimedAt, &r.WakeAt, &r.AdmittedAt,
		&r.PoisonedAt, &r.PoisonReason, &r.FinishedAt, &r.Attempts, &r.Abandons,
		&r.Seq, &r.UpdatedAt, &r.Unfinished)
	if err != nil {
		s.T.Fatalf("read run %s: %v", runID, err)
	}
	return r
}

// dbNow returns the database clock.
func (s *RunStore) DbNow() time.Time {
	s.T.Helper()
	var now time.Time
	if err := s.Pool.QueryRow(Context(s.T), `select now()`).Scan(&now); err != nil {
		s.T.Fatalf("now: %v", err)
	}
	return now
}

// tableCounts returns the row counts of every Docket table.
func (s *RunStore) TableCounts() [4]int64 {
	s.T.Helper()
	var c [4]int64
	for i, table := range []string{"docket_runs", "docket_claim_partitions", "docket_claim_schedule", "docket_claim_policy"} {
		c[i] = QueryInt64(s.T, s.Pool, "select count(*) from "+table)
	}
	return c
}

// ExpectErrorIs fails unless errors.Is(err, target).
func ExpectErrorIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: want %v, got %v", what, target, err)
	}
}

// expectAdmission fails unless InspectRun derives want for runID.
func (s *RunStore) ExpectAdmission(tenant, runID string, want docket.AdmissionState) {
	s.T.Helper()
	got, err := s.Client.InspectRun(Context(s.T), docket.Tenant(tenant), runID)
	if err != nil {
		s.T.Fatalf("inspect %s: %v", runID, err)
	}
	if got.State != want {
		s.T.Fatalf("admission state of %s: want %s, got %s (%+v)", runID, want, got.State, got)
	}
}

// dueAt returns runID's wake time, failing when it has none.
func (s *RunStore) DueAt(runID string) time.Time {
	s.T.Helper()
	r := s.Row(runID)
	if r.WakeAt == nil {
		s.T.Fatalf("run %s has no wake time: %+v", runID, r)
	}
	return *r.WakeAt
}

// claim claims runID at the database clock.
func (s *RunStore) Claim(tenant, runID string) RunStoreLease {
	s.T.Helper()
	return s.ClaimAt(tenant, runID, s.DbNow())
}

// claimAt makes one demand-one claim call as of now and fails unless it
// leases exactly runID of tenant.
func (s *RunStore) ClaimAt(tenant, runID string, now time.Time) RunStoreLease {
	s.T.Helper()
	res := s.ClaimDue(now, time.Hour, 100)
	if len(res.Leases) != 1 || len(res.Poisoned) != 0 || res.Leases[0].RunID != runID || res.Leases[0].Scope != docket.Tenant(tenant) {
		s.T.Fatalf("claim at %s: want one lease of %s/%s, got %+v", now, tenant, runID, res)
	}
	return RunStoreLease{Holder: res.Leases[0].Holder(), Seq: res.Leases[0].CheckpointSeq}
}

// claimDue makes one demand-one claim call through ClaimDue.
func (s *RunStore) ClaimDue(now time.Time, orphanTTL time.Duration, maxAttempts int) docket.ClaimResult {
	s.T.Helper()
	res, err := s.Client.ClaimDue(Context(s.T), docket.ClaimRequest{
		Now: now, Limit: 1, ClaimTTL: orphanTTL, MaxClaimAttempts: maxAttempts,
	})
	if err != nil {
		s.T.Fatalf("claim due at %s: %v", now, err)
	}
	return res
}
