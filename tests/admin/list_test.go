package admin

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/policy"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// Admin.ListDomainRuns pages across scopes in (StartedAt, RunID) order and
// refuses bad input with ErrInvalidArgument; Admin.ListTenants pages through
// partitions in key order and refuses a bad page size or cursor the same way.
func TestAdminListDomainRunsAndTenants(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.OpenClient(t, pool, docket.Config{ClaimPolicy: policy.TenantFair{DefaultMaxActiveRuns: 2}})
	seed(t, pool)
	ctx := testkit.Context(t)
	admin, err := docket.NewAdmin(ctx, pool, docket.AdminConfig{})
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	var ids []string
	var after *docket.RunCursor
	for pages := 0; ; pages++ {
		page, err := admin.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Limit: 2, After: after})
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, r := range page.Runs {
			ids = append(ids, r.Scope.String()+"/"+r.RunID)
		}
		if page.Next == nil {
			if pages != 2 {
				t.Fatalf("listing took %d pages, want 3", pages+1)
			}
			break
		}
		after = page.Next
	}
	if got, want := strings.Join(ids, " "), "tenant:beta/r5 tenantless/r4 tenant:beta/r3 tenant:acme/r2 tenant:acme/r1"; got != want {
		t.Fatalf("domain listing = %s, want %s", got, want)
	}
	page, err := admin.ListDomainRuns(ctx, docket.ListDomainRunsRequest{Status: docket.StatusRunning, GraphID: "g1"})
	if err != nil || len(page.Runs) != 3 || page.Next != nil {
		t.Fatalf("running g1 runs: %d runs, next %v, err %v", len(page.Runs), page.Next, err)
	}
	for _, req := range []docket.ListDomainRunsRequest{
		{Limit: -1},
		{Limit: docket.MaxListLimit + 1},
		{Status: "stuck"},
		{GraphID: "g\x00"},
		{After: &docket.RunCursor{StartedAt: time.Now(), RunID: "r\x00"}},
	} {
		if _, err := admin.ListDomainRuns(ctx, req); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Errorf("ListDomainRuns(%+v) error %v, want ErrInvalidArgument", req, err)
		}
	}

	tenants, err := admin.ListTenants(ctx, docket.ListTenantsRequest{Limit: 2})
	if err != nil || len(tenants.Tenants) != 2 || tenants.Next == nil || *tenants.Next != docket.Tenant("acme") {
		t.Fatalf("first tenants page: %+v, %v", tenants, err)
	}
	if tenants.Tenants[0].Scope != docket.Tenantless || tenants.Tenants[1].Unfinished != 2 || tenants.Tenants[1].EffectiveMaxActiveRuns != 2 {
		t.Fatalf("first tenants page = %+v", tenants.Tenants)
	}
	tenants, err = admin.ListTenants(ctx, docket.ListTenantsRequest{After: tenants.Next})
	if err != nil || len(tenants.Tenants) != 1 || tenants.Next != nil || tenants.Tenants[0].Scope != docket.Tenant("beta") {
		t.Fatalf("second tenants page: %+v, %v", tenants, err)
	}
	empty := docket.Tenant("")
	for _, req := range []docket.ListTenantsRequest{{Limit: -1}, {Limit: docket.MaxListLimit + 1}, {After: &empty}} {
		if _, err := admin.ListTenants(ctx, req); !errors.Is(err, docket.ErrInvalidArgument) {
			t.Errorf("ListTenants(%+v) error %v, want ErrInvalidArgument", req, err)
		}
	}
}
