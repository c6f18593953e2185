package admin

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// version returns a pointer for ClaimPolicyWriteOptions.ExpectedVersion.
func version(v int64) docket.ClaimPolicyWriteOptions {
	return docket.ClaimPolicyWriteOptions{ExpectedVersion: &v}
}

// noCAS writes unconditionally.
var noCAS = docket.ClaimPolicyWriteOptions{}

// admState is everything an admin write could change: the policy row and
// the partitions, schedule and runs.
func admState(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	p := testkit.StartupReadPolicy(t, pool)
	return p.Mode + "|" + p.UpdatedAt + "|" + p.RowVersion + "|" + testkit.GuardState(t, pool)
}

// expectRefused runs write and requires an error matching want with no
// change to the database.
func expectRefused(t testing.TB, pool *pgxpool.Pool, what string, want error, write func() error) {
	t.Helper()
	before := admState(t, pool)
	if err := write(); !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
	if after := admState(t, pool); after != before {
		t.Fatalf("%s was refused but changed the database:\nbefore %s\nafter  %s", what, before, after)
	}
}

// newAdmin returns an Admin on pool under mode.
func newAdmin(t testing.TB, pool *pgxpool.Pool, mode docket.TenantMode) *docket.Admin {
	t.Helper()
	admin, err := docket.NewAdmin(testkit.Context(t), pool, docket.AdminConfig{TenantMode: mode})
	if err != nil {
		t.Fatalf("NewAdmin: %v", err)
	}
	return admin
}

func TestClaimPolicyAdminDefault(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	admin := newAdmin(t, pool, docket.TenantNone)

	got, err := admin.FetchClaimPolicyDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Initialized || got.MaxActiveRuns != 0 || got.ConfiguredMaxActiveRuns != 0 || got.Version != 0 || got.AdmissionMode != "legacy" {
		t.Fatalf("fresh default = %+v, want uninitialized legacy at version 0", got)
	}
	expectRefused(t, pool, "default before initialization", docket.ErrNotInitialized, func() error {
		_, err := admin.PutClaimPolicyDefault(ctx, 5, noCAS)
		return err
	})

	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	got, err = admin.FetchClaimPolicyDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Initialized || got.MaxActiveRuns != 4 || got.ConfiguredMaxActiveRuns != 4 || got.Version != 1 || got.AdmissionMode != "tenant_fair" {
		t.Fatalf("default after the first start = %+v, want 4 at version 1", got)
	}

	written, err := admin.PutClaimPolicyDefault(ctx, 6, version(1))
	if err != nil {
		t.Fatal(err)
	}
	if written.MaxActiveRuns != 6 || written.Version != 2 || written.ConfiguredMaxActiveRuns != 4 {
		t.Fatalf("CAS write returned %+v, want 6 at version 2 with configured 4", written)
	}
	if fetched, err := admin.FetchClaimPolicyDefault(ctx); err != nil || fetched != written {
		t.Fatalf("fetch after write = %+v, %v; want %+v", fetched, err, written)
	}

	expectRefused(t, pool, "stale default write", docket.ErrStale, func() error {
		_, err := admin.PutClaimPolicyDefault(ctx, 8, version(1))
		var stale *docket.StaleVersionError
		if !errors.As(err, &stale) || stale.Expected != 1 || stale.Current != 2 {
			t.Fatalf("stale error = %v, want expected 1 and current 2", err)
		}
		return err
	})
	for _, capValue := range []int{0, -1, docket.MaxCap + 1} {
		expectRefused(t, pool, "invalid default cap", docket.ErrInvalidCap, func() error {
			_, err := admin.PutClaimPolicyDefault(ctx, capValue, version(2))
			return err
		})
	}
	expectRefused(t, pool, "negative expected version", docket.ErrInvalidArgument, func() error {
		_, err := admin.PutClaimPolicyDefault(ctx, 3, version(-1))
		return err
	})

	if written, err = admin.PutClaimPolicyDefault(ctx, docket.MaxCap, noCAS); err != nil || written.Version != 3 || written.MaxActiveRuns != docket.MaxCap {
		t.Fatalf("unconditional write = %+v, %v; want the largest cap at version 3", written, err)
	}
	if written, err = admin.PutClaimPolicyDefault(ctx, 1, version(3)); err != nil || written.Version != 4 || written.MaxActiveRuns != 1 {
		t.Fatalf("CAS write = %+v, %v; want 1 at version 4", written, err)
	}
}

func TestClaimPolicyAdminOverride(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))

	written, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("acme"), 3, version(0))
	if err != nil {
		t.Fatal(err)
	}
	if written.MaxActiveRuns != 3 || written.Version != 1 || written.Scope != docket.Tenant("acme") {
		t.Fatalf("first override = %+v, want 3 at version 1", written)
	}
	if got := testkit.MigrationSchedule(t, pool); len(got) != 1 || got[0].Scope != "acme" || got[0].Unfinished != 0 || got[0].Position < 1 {
		t.Fatalf("schedule after the first override = %+v, want one zero-count acme row", got)
	}

	expectRefused(t, pool, "stale override", docket.ErrStale, func() error {
		_, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("acme"), 5, version(0))
		return err
	})
	expectRefused(t, pool, "stale override of a new scope", docket.ErrStale, func() error {
		_, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("newco"), 2, version(4))
		return err
	})
	if written, err = client.PutClaimPolicyOverride(ctx, docket.Tenant("acme"), 5, version(1)); err != nil || written.Version != 2 || written.MaxActiveRuns != 5 {
		t.Fatalf("second override = %+v, %v; want 5 at version 2", written, err)
	}

	expectRefused(t, pool, "stale reset", docket.ErrStale, func() error {
		_, err := client.ResetClaimPolicyOverride(ctx, docket.Tenant("acme"), version(1))
		return err
	})
	if written, err = client.ResetClaimPolicyOverride(ctx, docket.Tenant("acme"), version(2)); err != nil || written.Version != 3 || written.MaxActiveRuns != 0 {
		t.Fatalf("reset = %+v, %v; want no override at version 3", written, err)
	}
	if got := testkit.QueryInt64(t, pool, `select count(*) from docket_claim_partitions where scope_key = 'acme' and max_active is null and partition_version = 3`); got != 1 {
		t.Fatalf("acme partition after reset: %d matching rows, want 1", got)
	}
	if written, err = client.ResetClaimPolicyOverride(ctx, docket.Tenant("fresh"), noCAS); err != nil || written.Version != 1 || written.MaxActiveRuns != 0 {
		t.Fatalf("reset of a scope without partition = %+v, %v; want version 1", written, err)
	}

	for _, capValue := range []int{0, -7, docket.MaxCap + 1} {
		expectRefused(t, pool, "invalid override cap", docket.ErrInvalidCap, func() error {
			_, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("acme"), capValue, version(3))
			return err
		})
	}
	expectRefused(t, pool, "negative expected partition version", docket.ErrInvalidArgument, func() error {
		_, err := client.ResetClaimPolicyOverride(ctx, docket.Tenant("acme"), version(-3))
		return err
	})

	invalid := []docket.Scope{
		docket.Tenant(""),
		docket.Tenant(strings.Repeat("x", docket.MaxIdentifierBytes+1)),
		docket.Tenant("line\nbreak"),
		docket.Tenant("tab\there"),
		docket.Tenant("del\x7f"),
		docket.Tenant("bad\xffutf8"),
	}
	for _, scope := range invalid {
		expectRefused(t, pool, "override of "+scope.String(), docket.ErrInvalidArgument, func() error {
			_, err := client.PutClaimPolicyOverride(ctx, scope, 2, noCAS)
			return err
		})
		expectRefused(t, pool, "reset of "+scope.String(), docket.ErrInvalidArgument, func() error {
			_, err := client.ResetClaimPolicyOverride(ctx, scope, noCAS)
			return err
		})
		if _, err := client.InspectClaimPolicy(ctx, scope); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Fatalf("inspect of %s: %v, want ErrInvalidArgument", scope, err)
		}
	}
	longest := docket.Tenant(strings.Repeat("y", docket.MaxIdentifierBytes))
	if written, err = client.PutClaimPolicyOverride(ctx, longest, 2, version(0)); err != nil || written.Version != 1 {
		t.Fatalf("override of the longest tenant id = %+v, %v; want version 1", written, err)
	}

	expectRefused(t, pool, "tenantless override under required tenancy", docket.ErrTenantRequired, func() error {
		_, err := client.PutClaimPolicyOverride(ctx, docket.Tenantless, 2, noCAS)
		return err
	})
	expectRefused(t, pool, "tenantless reset under required tenancy", docket.ErrTenantRequired, func() error {
		_, err := client.ResetClaimPolicyOverride(ctx, docket.Tenantless, noCAS)
		return err
	})
	if _, err := client.InspectClaimPolicy(ctx, docket.Tenantless); !errors.Is(err, docket.ErrTenantRequired) {
		t.Fatalf("tenantless inspect under required tenancy: %v, want ErrTenantRequired", err)
	}
	required := newAdmin(t, pool, docket.TenantRequired)
	expectRefused(t, pool, "tenantless override through a required-tenancy Admin", docket.ErrTenantRequired, func() error {
		_, err := required.PutClaimPolicyOverride(ctx, docket.Tenantless, 2, noCAS)
		return err
	})
}

func TestClaimPolicyAdminConcurrentWritersOneWins(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, testkit.TenantFairConfig(4))
	admins := []*docket.Admin{
		newAdmin(t, testkit.PoolFor(t, pool.Config().ConnString()), docket.TenantRequired),
		newAdmin(t, testkit.PoolFor(t, pool.Config().ConnString()), docket.TenantRequired),
	}
	writes := map[string]func(a *docket.Admin, capValue int) error{
		"default": func(a *docket.Admin, capValue int) error {
			_, err := a.PutClaimPolicyDefault(testkit.Context(t), capValue, version(1))
			return err
		},
		"override": func(a *docket.Admin, capValue int) error {
			_, err := a.PutClaimPolicyOverride(testkit.Context(t), docket.Tenant("race"), capValue, version(0))
			return err
		},
	}
	for name, write := range writes {
		start := make(chan struct{})
		errs := make([]error, len(admins))
		var wg sync.WaitGroup
		for i, a := range admins {
			wg.Go(func() {
				<-start
				errs[i] = write(a, 10+i)
			})
		}
		close(start)
		wg.Wait()
		wins, stale := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, docket.ErrStale):
				stale++
			default:
				t.Fatalf("%s: unexpected error %v", name, err)
			}
		}
		if wins != 1 || stale != 1 {
			t.Fatalf("%s: %d wins and %d stale, want exactly one of each", name, wins, stale)
		}
	}
	if got := testkit.QueryInt64(t, pool, `select policy_version from docket_claim_policy`); got != 2 {
		t.Fatalf("policy version = %d, want 2", got)
	}
	if got := testkit.QueryInt64(t, pool, `select partition_version from docket_claim_partitions where scope_key = 'race'`); got != 1 {
		t.Fatalf("partition version = %d, want 1", got)
	}
}

// mark gives runs an admission marker: claimed runs at their claim time,
// unclaimed ones a minute ago.
func mark(t testing.TB, pool *pgxpool.Pool, runIDs ...string) {
	t.Helper()
	testkit.ExecSQL(t, pool, `update docket_runs set tenant_admitted_at = coalesce(claimed_at, now() - interval '1 minute')
		where run_id = any($1)`, runIDs)
}

func TestClaimPolicyAdminInspectCounts(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	client := testkit.OpenClient(t, pool, testkit.TenantFairConfig(10))
	testkit.MigrationInsertRuns(t, pool,
		testkit.MigrationRun{RunID: "q1", Tenant: "seeded", Shape: "ready"},
		testkit.MigrationRun{RunID: "q2", Tenant: "seeded", Shape: "ready"},
		testkit.MigrationRun{RunID: "q3", Tenant: "seeded", Shape: "ready"},
		testkit.MigrationRun{RunID: "later", Tenant: "seeded", Shape: "future"},
		testkit.MigrationRun{RunID: "ar1", Tenant: "seeded", Shape: "ready"},
		testkit.MigrationRun{RunID: "ar2", Tenant: "seeded", Shape: "ready"},
		testkit.MigrationRun{RunID: "ac1", Tenant: "seeded", Shape: "claimed"},
		testkit.MigrationRun{RunID: "ac2", Tenant: "seeded", Shape: "claimed"},
		testkit.MigrationRun{RunID: "ac3", Tenant: "seeded", Shape: "claimed"},
		testkit.MigrationRun{RunID: "parked", Tenant: "seeded", Shape: "waiting"},
		testkit.MigrationRun{RunID: "finished", Tenant: "seeded", Shape: "done"},
		testkit.MigrationRun{RunID: "poison", Tenant: "seeded", Shape: "poisoned"},
		testkit.MigrationRun{RunID: "n1", Tenant: "noise", Shape: "ready"},
		testkit.MigrationRun{RunID: "n2", Tenant: "noise", Shape: "claimed"},
	)
	mark(t, pool, "ar1", "ar2", "ac1", "ac2", "ac3", "n2")
	testkit.ExecSQL(t, pool, `update docket_claim_partitions set admission_epoch = 3 where scope_key = 'seeded'`)
	position := testkit.QueryInt64(t, pool, `select ring_position from docket_claim_schedule where scope_key = 'seeded'`)
	if _, err := client.PutClaimPolicyOverride(ctx, docket.Tenant("seeded"), 4, version(0)); err != nil {
		t.Fatal(err)
	}

	want := docket.ClaimPolicyInspection{
		Scope:                  docket.Tenant("seeded"),
		AdmissionMode:          "tenant_fair",
		EffectiveMaxActiveRuns: 4,
		Source:                 docket.CapFromOverride,
		PolicyVersion:          1,
		PartitionVersion:       1,
		AdmissionEpoch:         3,
		RingPosition:           position,
		Unfinished:             11,
		Queued:                 3,
		AdmittedReady:          2,
		AdmittedClaimed:        3,
		Admitted:               5,
		Debt:                   1,
	}
	expectInspection(t, client, want)

	if _, err := client.ResetClaimPolicyOverride(ctx, docket.Tenant("seeded"), version(1)); err != nil {
		t.Fatal(err)
	}
	want.EffectiveMaxActiveRuns, want.Source, want.PartitionVersion, want.Debt = 10, docket.CapFromDefault, 2, 0
	expectInspection(t, client, want)

	if _, err := client.PutClaimPolicyDefault(ctx, 2, version(1)); err != nil {
		t.Fatal(err)
	}
	want.EffectiveMaxActiveRuns, want.PolicyVersion, want.Debt = 2, 2, 3
	expectInspection(t, client, want)

	before := admState(t, pool)
	expectInspection(t, client, docket.ClaimPolicyInspection{
		Scope:                  docket.Tenant("nobody"),
		AdmissionMode:          "tenant_fair",
		EffectiveMaxActiveRuns: 2,
		Source:                 docket.CapFromDefault,
		PolicyVersion:          2,
	})
	if after := admState(t, pool); after != before {
		t.Fatalf("inspect wrote to the database:\nbefore %s\nafter  %s", before, after)
	}
}

func expectInspection(t testing.TB, client *docket.Client, want docket.ClaimPolicyInspection) {
	t.Helper()
	got, err := client.InspectClaimPolicy(testkit.Context(t), want.Scope)
	if err != nil {
		t.Fatalf("inspect %s: %v", want.Scope, err)
	}
	if got != want {
		t.Fatalf("inspect %s\n got %+v\nwant %+v", want.Scope, got, want)
	}
}

func TestClaimPolicyAdminTenantlessScope(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	client := testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 3}})
	testkit.MigrationInsertRuns(t, pool, testkit.MigrationRun{RunID: "t1", Tenant: "", Shape: "ready"}, testkit.MigrationRun{RunID: "t2", Tenant: "", Shape: "ready"}, testkit.MigrationRun{RunID: "t3", Tenant: "", Shape: "claimed"})
	mark(t, pool, "t3")
	position := testkit.QueryInt64(t, pool, `select ring_position from docket_claim_schedule where scope_key = ''`)

	written, err := client.PutClaimPolicyOverride(ctx, docket.Tenantless, 1, version(0))
	if err != nil || written.Version != 1 || written.Scope != docket.Tenantless {
		t.Fatalf("tenantless override = %+v, %v; want version 1", written, err)
	}
	if got := testkit.QueryInt64(t, pool, `select max_active from docket_claim_partitions where scope_key = ''`); got != 1 {
		t.Fatalf("tenantless partition cap = %d, want 1", got)
	}
	want := docket.ClaimPolicyInspection{
		Scope:                  docket.Tenantless,
		AdmissionMode:          "tenant_fair",
		EffectiveMaxActiveRuns: 1,
		Source:                 docket.CapFromOverride,
		PolicyVersion:          1,
		PartitionVersion:       1,
		RingPosition:           position,
		Unfinished:             3,
		Queued:                 2,
		AdmittedClaimed:        1,
		Admitted:               1,
	}
	expectInspection(t, client, want)
	if written, err = client.ResetClaimPolicyOverride(ctx, docket.Tenantless, version(1)); err != nil || written.Version != 2 {
		t.Fatalf("tenantless reset = %+v, %v; want version 2", written, err)
	}
	want.EffectiveMaxActiveRuns, want.Source, want.PartitionVersion = 3, docket.CapFromDefault, 2
	expectInspection(t, client, want)
}

func TestClaimPolicyAdminBeforeInitialization(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	ctx := testkit.Context(t)
	admin := newAdmin(t, pool, docket.TenantNone)
	if _, err := admin.InspectClaimPolicy(ctx, docket.Tenant("early")); !errors.Is(err, docket.ErrNotInitialized) {
		t.Fatalf("inspect without default or override: %v, want ErrNotInitialized", err)
	}
	// Overrides are runtime state of their own and may precede the first start.
	if _, err := admin.PutClaimPolicyOverride(ctx, docket.Tenant("early"), 2, version(0)); err != nil {
		t.Fatal(err)
	}
	got, err := admin.InspectClaimPolicy(ctx, docket.Tenant("early"))
	if err != nil {
		t.Fatal(err)
	}
	if got.EffectiveMaxActiveRuns != 2 || got.Source != docket.CapFromOverride || got.AdmissionMode != "legacy" || got.PolicyVersion != 0 {
		t.Fatalf("inspect with an override before initialization = %+v", got)
	}
	if p := testkit.StartupReadPolicy(t, pool); p.InitializedAt != "" || p.Version != 0 || p.Mode != "legacy" {
		t.Fatalf("admin calls changed the uninitialized policy: %+v", p)
	}
}
