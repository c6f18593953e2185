package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// TenantSort orders BrowseTenants.
type TenantSort string

const (
	// TenantSortScope orders by scope key (the tenantless scope first),
	// walked on the partitions' primary key.
	TenantSortScope TenantSort = "scope"
	// TenantSortUnfinished orders by unfinished runs, most first.
	TenantSortUnfinished TenantSort = "unfinished"
	// TenantSortQueued orders by queued runs, most first.
	TenantSortQueued TenantSort = "queued"
	// TenantSortDebt orders by debt, most first.
	TenantSortDebt TenantSort = "debt"
)

// TenantState filters BrowseTenants by what a partition is doing.
type TenantState string

const (
	// TenantStateCapped keeps partitions whose admitted runs reach the cap.
	TenantStateCapped TenantState = "capped"
	// TenantStateQueued keeps partitions with queued (unadmitted, due) runs.
	TenantStateQueued TenantState = "queued"
	// TenantStateParked keeps parked partitions.
	TenantStateParked TenantState = "parked"
	// TenantStateEmpty keeps partitions without unfinished runs.
	TenantStateEmpty TenantState = "empty"
)

// TenantCursor continues a BrowseTenants listing after the last row of a
// page: its sort value (0 under TenantSortScope) and its scope.
type TenantCursor struct {
	Value int64
	Scope Scope
}

// BrowseTenantsRequest selects one page of the domain's partitions in a
// chosen order, optionally filtered. Ties of the sort value are ordered by
// scope key, so the keyset (value, scope) is total.
type BrowseTenantsRequest struct {
	// Sort is the order; "" means TenantSortScope.
	Sort TenantSort
	// Prefix keeps only tenants whose id starts with it when non-empty.
	Prefix string
	// State keeps only partitions in that state when non-empty.
	State TenantState
	// After continues strictly after this cursor; nil starts at the first.
	After *TenantCursor
	// Limit is the page size: 0 means DefaultListLimit, at most MaxListLimit.
	Limit int
}

// BrowsedTenant is one row of BrowseTenants, or InspectTenant. Unlike
// InspectClaimPolicy it also reads a scope that has no effective cap (no
// override in a domain whose policy was never initialized, as under Legacy):
// then EffectiveMaxActiveRuns is 0, Source is empty and Debt is 0.
type BrowsedTenant struct {
	ClaimPolicyInspection
	// LastGrantedAt is the latest admission time among the scope's
	// currently admitted runs; nil when none is admitted.
	LastGrantedAt *time.Time
	// FailedRuns counts the scope's failed runs that retention has not
	// deleted yet.
	FailedRuns int64
	// QueuedSince is when the head of the scope's queue (the queued due run
	// with the earliest wake_at, which admission takes first) began to wait:
	// the later of its wake_at and its insert time. Nil when nothing is
	// queued.
	QueuedSince *time.Time
	// OldestQueuedAge is the database's now minus QueuedSince, to the whole
	// second; 0 when nothing is queued.
	OldestQueuedAge time.Duration
}

// TenantBrowsePage is one page of BrowseTenants.
type TenantBrowsePage struct {
	// Tenants are the page's partitions, in the requested order.
	Tenants []BrowsedTenant
	// Next continues the listing; nil when this is the last page.
	Next *TenantCursor
}

// BrowseTenants returns one page of the domain's partitions in req.Sort order
// with each scope's InspectClaimPolicy view and its last grant, continuing
// strictly after req.After by keyset (never by offset). The scope order walks
// the primary key; the count orders scan every partition once per page (see
// docs/console.md for the measured cost). Each row is its own snapshot. An
// unknown sort or state, a bad cursor or limit fails with ErrInvalidArgument.
func (c *store) BrowseTenants(ctx context.Context, req BrowseTenantsRequest) (TenantBrowsePage, error) {
	return timed(ctx, c.telemetry, opBrowseTenants, func() (TenantBrowsePage, error) {
		q, err := c.checkBrowse(req)
		if err != nil {
			return TenantBrowsePage{}, err
		}
		keys, err := c.browseKeys(ctx, req.Sort, q)
		if err != nil {
			return TenantBrowsePage{}, fmt.Errorf("docket: browse tenants: %w", err)
		}
		var page TenantBrowsePage
		if len(keys) > q.limit {
			keys = keys[:q.limit]
			last := keys[q.limit-1]
			page.Next = &TenantCursor{Value: last.value, Scope: scopeOfKey(last.key)}
		}
		scopeKeys := make([]string, len(keys))
		for i, k := range keys {
			scopeKeys[i] = k.key
		}
		if page.Tenants, err = c.browsedTenants(ctx, scopeKeys); err != nil {
			return TenantBrowsePage{}, err
		}
		return page, nil
	})
}

// InspectTenant returns one scope's BrowseTenants row: its inspection (also
// without an effective cap) and its last grant. An invalid scope fails with
// ErrInvalidArgument or ErrTenantRequired.
func (c *store) InspectTenant(ctx context.Context, scope Scope) (BrowsedTenant, error) {
	return timed(ctx, c.telemetry, opInspectTenant, func() (BrowsedTenant, error) {
		key, err := c.scopeKey(scope)
		if err != nil {
			return BrowsedTenant{}, err
		}
		rows, err := c.browsedTenants(ctx, []string{key})
		if err != nil {
			return BrowsedTenant{}, err
		}
		return rows[0], nil
	})
}

// browsedTenants inspects each of keys and adds its last grant, its failed
// runs and the age of its queue's head.
func (c *store) browsedTenants(ctx context.Context, keys []string) ([]BrowsedTenant, error) {
	grants, err := c.queries.ConsoleLastGrants(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("docket: last grants: %w", err)
	}
	extraRows, err := c.queries.ConsoleTenantExtras(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("docket: failed runs and queue heads: %w", err)
	}
	extras := make(map[string]dbgen.ConsoleTenantExtrasRow, len(extraRows))
	for _, e := range extraRows {
		extras[e.ScopeKey] = e
	}
	lastGrant := make(map[string]time.Time, len(grants))
	for _, g := range grants {
		if g.ScopeKey != nil {
			lastGrant[*g.ScopeKey] = g.LastGrantedAt
		}
	}
	out := make([]BrowsedTenant, len(keys))
	for i, key := range keys {
		if out[i].ClaimPolicyInspection, err = c.inspectScope(ctx, scopeOfKey(key)); err != nil {
			return nil, err
		}
		if at, ok := lastGrant[key]; ok {
			out[i].LastGrantedAt = &at
		}
		e := extras[key]
		out[i].FailedRuns = e.FailedRuns
		if e.HasQueued {
			since := e.QueuedSince
			out[i].QueuedSince = &since
			out[i].OldestQueuedAge = time.Duration(e.QueuedAgeSeconds) * time.Second
		}
	}
	return out, nil
}

// browseQuery is a validated BrowseTenantsRequest in query form.
type browseQuery struct {
	afterKey   *string
	afterValue int64
	prefix     *string
	state      *string
	limit      int
}

// browseKey is one listed partition and its sort value.
type browseKey struct {
	key   string
	value int64
}

// checkBrowse validates req.
func (c *store) checkBrowse(req BrowseTenantsRequest) (browseQuery, error) {
	q := browseQuery{limit: req.Limit}
	switch {
	case q.limit == 0:
		q.limit = DefaultListLimit
	case q.limit < 0 || q.limit > MaxListLimit:
		return browseQuery{}, invalidArgument("list limit %d is outside 1..%d", req.Limit, MaxListLimit)
	}
	switch req.Sort {
	case "", TenantSortScope, TenantSortUnfinished, TenantSortQueued, TenantSortDebt:
	default:
		return browseQuery{}, invalidArgument("unknown tenant sort %q", req.Sort)
	}
	switch req.State {
	case "":
	case TenantStateCapped, TenantStateQueued, TenantStateParked, TenantStateEmpty:
		s := string(req.State)
		q.state = &s
	default:
		return browseQuery{}, invalidArgument("unknown tenant state %q", req.State)
	}
	if req.Prefix != "" {
		if err := requireStorable("tenant prefix", req.Prefix); err != nil {
			return browseQuery{}, err
		}
		q.prefix = &req.Prefix
	}
	if req.After != nil {
		key, err := c.runScopeKey(req.After.Scope)
		if err != nil {
			return browseQuery{}, err
		}
		if req.After.Value < 0 {
			return browseQuery{}, invalidArgument("tenant cursor value %d is negative", req.After.Value)
		}
		q.afterKey, q.afterValue = &key, req.After.Value
	}
	return q, nil
}

// browseKeys runs the keyset query of sort, one row beyond the page.
func (c *store) browseKeys(ctx context.Context, sort TenantSort, q browseQuery) ([]browseKey, error) {
	pageLimit := int32(q.limit + 1)
	var keys []browseKey
	switch sort {
	case TenantSortUnfinished:
		rows, err := c.queries.ConsoleTenantsByUnfinished(ctx, dbgen.ConsoleTenantsByUnfinishedParams{
			AfterScopeKey: q.afterKey, AfterValue: q.afterValue, Prefix: q.prefix, State: q.state, PageLimit: pageLimit,
		})
		for _, r := range rows {
			keys = append(keys, browseKey{r.ScopeKey, r.SortValue})
		}
		return keys, err
	case TenantSortQueued:
		rows, err := c.queries.ConsoleTenantsByQueued(ctx, dbgen.ConsoleTenantsByQueuedParams{
			AfterScopeKey: q.afterKey, AfterValue: q.afterValue, Prefix: q.prefix, State: q.state, PageLimit: pageLimit,
		})
		for _, r := range rows {
			keys = append(keys, browseKey{r.ScopeKey, r.SortValue})
		}
		return keys, err
	case TenantSortDebt:
		rows, err := c.queries.ConsoleTenantsByDebt(ctx, dbgen.ConsoleTenantsByDebtParams{
			AfterScopeKey: q.afterKey, AfterValue: q.afterValue, Prefix: q.prefix, State: q.state, PageLimit: pageLimit,
		})
		for _, r := range rows {
			keys = append(keys, browseKey{r.ScopeKey, r.SortValue})
		}
		return keys, err
	default:
		rows, err := c.queries.ConsoleTenantsByScope(ctx, dbgen.ConsoleTenantsByScopeParams{
			AfterScopeKey: q.afterKey, Prefix: q.prefix, State: q.state, PageLimit: pageLimit,
		})
		for _, r := range rows {
			keys = append(keys, browseKey{key: r.ScopeKey})
		}
		return keys, err
	}
}
