package docket

import (
	"context"
	"fmt"
	"math"
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
		key, err := c.scopeKey(req.After.Scope)
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
			key, err := c.scopeKey(*req.After)
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

// RingState says what a TenantFair visit would find at a ring position.
type RingState string

const (
	// RingEligible has work a visit can claim: admitted-ready runs, or queued
	// runs under the cap.
	RingEligible RingState = "eligible"
	// RingCapped has queued runs but its admitted runs reach the cap.
	RingCapped RingState = "capped"
	// RingDormant has unfinished runs but nothing due to claim (timers,
	// waiting, poisoned or claimed runs).
	RingDormant RingState = "dormant"
	// RingParked is a parked partition, which parked-mode calls skip.
	RingParked RingState = "parked"
	// RingPaused is a paused tenant (PauseTenant) with unfinished runs, or
	// any position with unfinished runs of a paused domain (PauseDomain):
	// none of its runs is admitted or leased until the resume.
	RingPaused RingState = "paused"
	// RingEmpty has no unfinished run; it keeps its position but is outside
	// the ring proper.
	RingEmpty RingState = "empty"
)

// RingSlot is one ring position.
type RingSlot struct {
	// Position is the immutable ring position.
	Position int64
	// Scope owns the position.
	Scope Scope
	// Unfinished counts the scope's running and waiting runs.
	Unfinished int64
	// State is what a visit would find.
	State RingState
}

// RingWindowRequest selects a window of consecutive ring positions.
type RingWindowRequest struct {
	// From is the first position of the window; 0 centres the window on
	// the cursor (see RingWindow).
	From int64
	// Limit is the window size: 0 means 50, at most MaxListLimit.
	Limit int
}

// RingWindow is one window of the ring, in position order (a window
// centred on the cursor may wrap from the ring's last position to its
// first), with the domain's ring counts as DomainOverview reads them.
type RingWindow struct {
	// Cursor is the position the last committed TenantFair call visited
	// last; the next call starts at the first position after it.
	Cursor int64
	// RingSize counts the positions that own unfinished work, parked ones
	// included: DomainOverview.RingSize.
	RingSize int64
	// Partitions counts every position, empty ones included:
	// DomainOverview.Partitions.
	Partitions int64
	// Parked counts parked partitions: DomainOverview.Parked.
	Parked int64
	// Slots are the window's positions.
	Slots []RingSlot
	// Prev is the first position of the window before this one; 0 when this
	// window starts the ring or holds all of it.
	Prev int64
	// Next is the first position after this window; 0 when it ends the ring
	// or holds all of it.
	Next int64
}

// defaultRingWindow is the window size of a zero RingWindowRequest.Limit.
const defaultRingWindow = 50

// RingWindow returns a window of ring positions (every partition's, empty
// ones included) with the state a visit would find at each, walked on the
// positions' unique index, so its cost does not grow with the ring. With
// From set it starts there and runs forward. With From 0 it is centred on
// the cursor, as the ring is a circle: (n-1)/2 positions at or before the
// cursor's place come first, continued from the ring's last position when
// fewer lie before the cursor, then the cursor's, then those after it,
// continued from the ring's first position, where n is the window size or
// the number of positions when the ring is smaller (each position appears
// once). A negative From or a bad limit fails with ErrInvalidArgument.
func (c *store) RingWindow(ctx context.Context, req RingWindowRequest) (RingWindow, error) {
	return timed(ctx, c.telemetry, opRingWindow, func() (RingWindow, error) {
		limit := req.Limit
		switch {
		case limit == 0:
			limit = defaultRingWindow
		case limit < 0 || limit > MaxListLimit:
			return RingWindow{}, invalidArgument("ring window %d is outside 1..%d", req.Limit, MaxListLimit)
		}
		if req.From < 0 {
			return RingWindow{}, invalidArgument("ring position %d is negative", req.From)
		}
		summary, err := c.queries.ConsoleDomainSummary(ctx)
		if err != nil {
			return RingWindow{}, fmt.Errorf("docket: ring window: %w", err)
		}
		out := RingWindow{Cursor: summary.ScanRingPosition, RingSize: summary.RingSize, Partitions: summary.Partitions, Parked: summary.Parked}
		if req.From == 0 {
			return c.centredRingWindow(ctx, out, limit)
		}
		if out.Slots, out.Next, err = c.ringSegment(ctx, req.From, limit); err != nil {
			return RingWindow{}, err
		}
		if len(out.Slots) > 0 && out.Slots[0].Position > 1 {
			if out.Prev, err = c.ringStart(ctx, out.Slots[0].Position-1, limit); err != nil {
				return RingWindow{}, err
			}
		}
		return out, nil
	})
}

// centredRingWindow fills out with the window of size limit centred on
// out.Cursor (see RingWindow).
func (c *store) centredRingWindow(ctx context.Context, out RingWindow, limit int) (RingWindow, error) {
	n := int(min(int64(limit), out.Partitions))
	if n == 0 {
		return out, nil
	}
	whole := int64(n) == out.Partitions
	// The positions at or before the cursor's place that the window holds,
	// its own included.
	want := (n-1)/2 + 1
	before, err := c.queries.ConsoleRingStart(ctx, dbgen.ConsoleRingStartParams{AtOrBefore: out.Cursor, WindowSize: int32(want)})
	if err != nil {
		return RingWindow{}, fmt.Errorf("docket: ring window start: %w", err)
	}
	from := before.RingPosition
	if missing := want - int(before.Positions); missing > 0 {
		// Too few positions lie before the cursor: the window starts on the
		// ring's last positions, which precede the first on the circle.
		tail, err := c.queries.ConsoleRingStart(ctx, dbgen.ConsoleRingStartParams{AtOrBefore: math.MaxInt64, WindowSize: int32(missing)})
		if err != nil {
			return RingWindow{}, fmt.Errorf("docket: ring window start: %w", err)
		}
		if out.Slots, _, err = c.ringSegment(ctx, tail.RingPosition, missing); err != nil {
			return RingWindow{}, err
		}
		from = 1
	}
	rest, next, err := c.ringSegment(ctx, max(from, 1), n-len(out.Slots))
	if err != nil {
		return RingWindow{}, err
	}
	out.Slots, out.Next = append(out.Slots, rest...), next
	if missing := n - len(out.Slots); missing > 0 && from > 1 {
		// The window ran past the ring's last position: it continues from
		// the first, up to where it started.
		wrapped, next, err := c.ringSegment(ctx, 1, missing)
		if err != nil {
			return RingWindow{}, err
		}
		out.Slots, out.Next = append(out.Slots, wrapped...), next
	}
	// Partitions created since the summary was read may repeat a position
	// the window already holds.
	seen := make(map[int64]bool, len(out.Slots))
	kept := out.Slots[:0]
	for _, s := range out.Slots {
		if !seen[s.Position] {
			seen[s.Position] = true
			kept = append(kept, s)
		}
	}
	out.Slots = kept
	if whole {
		out.Next = 0
		return out, nil
	}
	if first := out.Slots[0].Position; first > 1 {
		if out.Prev, err = c.ringStart(ctx, first-1, limit); err != nil {
			return RingWindow{}, err
		}
	}
	return out, nil
}

// ringSegment returns up to limit positions from from on and the first
// position after them (0 when the ring ends there).
func (c *store) ringSegment(ctx context.Context, from int64, limit int) ([]RingSlot, int64, error) {
	rows, err := c.queries.ConsoleRingWindow(ctx, dbgen.ConsoleRingWindowParams{FromPosition: from, PageLimit: int32(limit + 1)})
	if err != nil {
		return nil, 0, fmt.Errorf("docket: ring window: %w", err)
	}
	var next int64
	if len(rows) > limit {
		next = ringPosition(rows[limit])
		rows = rows[:limit]
	}
	slots := make([]RingSlot, len(rows))
	for i, r := range rows {
		slots[i] = RingSlot{Position: ringPosition(r), Scope: scopeOfKey(r.ScopeKey), Unfinished: r.UnfinishedCount, State: ringStateOf(r)}
	}
	return slots, next, nil
}

// ringStart returns the first of up to size positions at or before at; 1
// when there is none, which starts at the ring's beginning.
func (c *store) ringStart(ctx context.Context, at int64, size int) (int64, error) {
	start, err := c.queries.ConsoleRingStart(ctx, dbgen.ConsoleRingStartParams{AtOrBefore: at, WindowSize: int32(size)})
	if err != nil {
		return 0, fmt.Errorf("docket: ring window start: %w", err)
	}
	return max(start.RingPosition, 1), nil
}

// ringPosition reads the position column, which is never null.
func ringPosition(r dbgen.ConsoleRingWindowRow) int64 {
	if r.RingPosition == nil {
		return 0
	}
	return *r.RingPosition
}

// ringStateOf classifies one position as a visit would see it.
func ringStateOf(r dbgen.ConsoleRingWindowRow) RingState {
	underCap := r.EffectiveMaxActive == nil || r.Admitted < int64(*r.EffectiveMaxActive)
	switch {
	case r.UnfinishedCount == 0:
		return RingEmpty
	case r.Paused:
		return RingPaused
	case r.Parked:
		return RingParked
	case r.HasAdmittedReady || (r.HasQueued && underCap):
		return RingEligible
	case r.HasQueued:
		return RingCapped
	default:
		return RingDormant
	}
}
