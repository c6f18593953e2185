package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// defaultPageSize is the rows of a listing page without a limit parameter.
const defaultPageSize = 50

// tenantsView is the tenants page's content.
type tenantsView struct {
	Sort    docket.TenantSort
	Prefix  string
	State   docket.TenantState
	Limit   int
	Tenants []docket.BrowsedTenant
	// SortLinks are the sort choices with the filters kept.
	SortLinks []sortLink
	// NextURL continues the listing; "" on the last page.
	NextURL string
	// FirstURL restarts it; "" on the first page.
	FirstURL string
	// States are the filter choices.
	States []docket.TenantState
}

// sortLink is one sort choice.
type sortLink struct {
	Sort    docket.TenantSort
	URL     string
	Current bool
}

var tenantSorts = []docket.TenantSort{docket.TenantSortScope, docket.TenantSortUnfinished, docket.TenantSortQueued, docket.TenantSortDebt}

var tenantStates = []docket.TenantState{docket.TenantStateCapped, docket.TenantStateQueued, docket.TenantStateParked, docket.TenantStateEmpty}

// tenantsPage serves "/tenants": one page of partitions, sorted, filtered and
// continued by keyset.
func (h *Handler) tenantsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := docket.BrowseTenantsRequest{
		Sort:   docket.TenantSort(q.Get("sort")),
		Prefix: q.Get("prefix"),
		State:  docket.TenantState(q.Get("state")),
	}
	if req.Sort == "" {
		req.Sort = docket.TenantSortScope
	}
	var err error
	if req.Limit, err = pageSize(q); err != nil {
		h.failErr(w, r, "tenants", err)
		return
	}
	if req.After, err = tenantCursorOf(q); err != nil {
		h.failErr(w, r, "tenants", err)
		return
	}
	page, err := h.admin.BrowseTenants(r.Context(), req)
	if err != nil {
		h.failErr(w, r, "tenants", err)
		return
	}
	v := tenantsView{Sort: req.Sort, Prefix: req.Prefix, State: req.State, Limit: req.Limit, Tenants: page.Tenants, States: tenantStates}
	base := url.Values{}
	if req.Prefix != "" {
		base.Set("prefix", req.Prefix)
	}
	if req.State != "" {
		base.Set("state", string(req.State))
	}
	if q.Has("limit") {
		base.Set("limit", strconv.Itoa(req.Limit))
	}
	for _, s := range tenantSorts {
		l := cloneValues(base)
		l.Set("sort", string(s))
		v.SortLinks = append(v.SortLinks, sortLink{Sort: s, URL: h.prefix + "/tenants?" + l.Encode(), Current: s == req.Sort})
	}
	first := cloneValues(base)
	first.Set("sort", string(req.Sort))
	if req.After != nil {
		v.FirstURL = h.prefix + "/tenants?" + first.Encode()
	}
	if page.Next != nil {
		next := cloneValues(first)
		next.Set("after_v", strconv.FormatInt(page.Next.Value, 10))
		if id, ok := page.Next.Scope.TenantID(); ok {
			next.Set("after_t", id)
		} else {
			next.Set("after_tl", "1")
		}
		v.NextURL = h.prefix + "/tenants?" + next.Encode()
	}
	h.render(w, r, http.StatusOK, "tenants", view{Title: "Tenants", Nav: "tenants", Data: v})
}

// tenantCursorOf reads the after_v, after_t and after_tl parameters.
func tenantCursorOf(q url.Values) (*docket.TenantCursor, error) {
	if !q.Has("after_t") && !q.Has("after_tl") {
		return nil, nil
	}
	c := &docket.TenantCursor{Scope: docket.Tenant(q.Get("after_t"))}
	if q.Has("after_tl") {
		c.Scope = docket.Tenantless
	}
	if v := q.Get("after_v"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: after_v %q is not an integer", errBadInput, v)
		}
		c.Value = n
	}
	return c, nil
}

// pageSize reads the limit parameter: defaultPageSize when absent; the
// facade validates its range.
func pageSize(q url.Values) (int, error) {
	v := q.Get("limit")
	if v == "" {
		return defaultPageSize, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("%w: limit %q is not a positive integer", errBadInput, v)
	}
	return n, nil
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
