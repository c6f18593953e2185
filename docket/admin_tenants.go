package docket

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// ListTenantsRequest selects one page of the domain's partitions in scope key
// order (the tenantless scope, when it has a partition, comes first).
type ListTenantsRequest struct {
	// After continues strictly after this scope; nil starts at the first.
	After *Scope
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// TenantPage is one page of ListTenants.
type TenantPage struct {
	// Tenants are the inspections of the page's scopes, in scope key order.
	Tenants []ClaimPolicyInspection
	// Next continues the listing; nil when this is the last page.
	Next *Scope
}

// ListTenants returns one page of the domain's partitions with each scope's
// InspectClaimPolicy view. Each inspection is its own snapshot: the page is
// not one consistent cut of the domain.
func (c *store) ListTenants(ctx context.Context, req ListTenantsRequest) (TenantPage, error) {
	return timed(ctx, c.telemetry, opListTenants, func() (TenantPage, error) {
		limit := req.Limit
		switch {
		case limit == 0:
			limit = DefaultListLimit
		case limit < 0 || limit > MaxListLimit:
			return TenantPage{}, invalidArgument("list limit %d is outside 1..%d", req.Limit, MaxListLimit)
		}
		var after *string
		if req.After != nil {
			key, err := c.runScopeKey(*req.After)
			if err != nil {
				return TenantPage{}, err
			}
			after = &key
		}
		keys, err := c.queries.ListClaimPartitionScopes(ctx, dbgen.ListClaimPartitionScopesParams{
			AfterScopeKey: after, PageLimit: int32(limit + 1),
		})
		if err != nil {
			return TenantPage{}, fmt.Errorf("docket: list tenants: %w", err)
		}
		var page TenantPage
		if len(keys) > limit {
			keys = keys[:limit]
			next := scopeOfKey(keys[limit-1])
			page.Next = &next
		}
		page.Tenants = make([]ClaimPolicyInspection, len(keys))
		for i, key := range keys {
			if page.Tenants[i], err = c.InspectClaimPolicy(ctx, scopeOfKey(key)); err != nil {
				return TenantPage{}, err
			}
		}
		return page, nil
	})
}

// scopeOfKey maps a partition key back to its scope.
func scopeOfKey(key string) Scope {
	if key == "" {
		return Tenantless
	}
	return Tenant(key)
}
