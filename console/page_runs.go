package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// runsView is the runs page's content.
type runsView struct {
	Filter   runsFilter
	Table    runTable
	Statuses []docket.RunStatus
	// Tabs are the phase tabs, "all" first; Counted reports that each
	// carries its count over the filtered runs (a search counts none).
	Tabs    []phaseTab
	Counted bool
	// Order is how the listing is sorted; AdmissionURL and NewestURL switch
	// the queued tab between its two orders ("" elsewhere).
	Order                   runsOrder
	AdmissionURL, NewestURL string
	// Hidden is the filter as hidden fields of the bulk form.
	Hidden []hiddenField
	// BulkMax is the most runs a bulk action applies to.
	BulkMax int
	// NextURL continues the listing; "" on the last page. FirstURL
	// restarts it; "" on the first page.
	NextURL, FirstURL string
}

// runsOrder is the order of a runs listing.
type runsOrder string

const (
	// orderNewest lists runs newest first by (StartedAt, RunID).
	orderNewest runsOrder = "newest"
	// orderAdmission lists queued runs oldest first, as their FIFOs admit
	// them: the queued tab's default.
	orderAdmission runsOrder = "admission"
	// orderRunID lists the matches of a run id search in run id order.
	orderRunID runsOrder = "run_id"
)

// phaseTab is one phase tab of the runs page.
type phaseTab struct {
	// Phase is the tab's phase; "" for all runs.
	Phase   docket.RunPhase
	Label   string
	Runs    int64
	URL     string
	Current bool
}

// hiddenField is one hidden form field.
type hiddenField struct {
	Name, Value string
}

// runsFilter is the runs page's parsed query.
type runsFilter struct {
	// Query is the run id or id prefix searched for; "" lists without a
	// search.
	Query      string
	Status     docket.RunStatus
	Phase      docket.RunPhase
	Graph      string
	Tenant     string
	Tenantless bool
	// Newest asks for the queued tab newest first instead of in admission
	// order.
	Newest bool
	// From and To bound StartedAt: From inclusive, To exclusive; the raw
	// texts are kept for the form.
	From, To         time.Time
	FromText, ToText string
	Limit            int
	// After continues a newest-first listing, AfterQueue one in admission
	// order and AfterID a search; each nil or "" on the first page.
	After      *docket.RunCursor
	AfterQueue *docket.QueueCursor
	AfterID    string
}

// order is the listing's order: a search's, the queued tab's admission
// order unless newest first is asked for, or newest first.
func (f runsFilter) order() runsOrder {
	switch {
	case f.Query != "":
		return orderRunID
	case f.Phase == docket.PhaseQueued && !f.Newest:
		return orderAdmission
	}
	return orderNewest
}

// timeLayouts are the accepted time forms: RFC 3339 and what a
// datetime-local input sends (read as UTC).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"}

// parseTime reads one time parameter.
func parseTime(name, v string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %s %q is not an RFC 3339 time", errBadInput, name, v)
}

// runsFilterOf parses the runs page's query.
func runsFilterOf(q url.Values) (runsFilter, error) {
	f := runsFilter{
		Query:  strings.TrimSpace(q.Get("q")),
		Status: docket.RunStatus(q.Get("status")), Phase: docket.RunPhase(q.Get("phase")), Graph: q.Get("graph"),
		Tenant: q.Get("tenant"), Tenantless: q.Get("tenantless") == "1", Newest: q.Get("order") == string(orderNewest),
		FromText: q.Get("from"), ToText: q.Get("to"),
	}
	var err error
	if f.FromText != "" {
		if f.From, err = parseTime("from", f.FromText); err != nil {
			return f, err
		}
	}
	if f.ToText != "" {
		if f.To, err = parseTime("to", f.ToText); err != nil {
			return f, err
		}
	}
	if f.Query != "" && (f.FromText != "" || f.ToText != "") {
		return f, fmt.Errorf("%w: a run id search takes no start-time bounds: clear from and to, or the search", errBadInput)
	}
	if f.Limit, err = pageSize(q); err != nil {
		return f, err
	}
	if !q.Has("after_run") {
		if f.order() == orderNewest && !f.To.IsZero() {
			// Newest first, strictly after (to, ""): exactly the runs
			// started before to, since no run id sorts below "".
			f.After = &docket.RunCursor{StartedAt: f.To}
		}
		return f, nil
	}
	runID := q.Get("after_run")
	switch f.order() {
	case orderRunID:
		f.AfterID = runID
	case orderAdmission:
		at, err := time.Parse(time.RFC3339Nano, q.Get("after_wake"))
		if err != nil {
			return f, fmt.Errorf("%w: after_wake %q is not an RFC 3339 time", errBadInput, q.Get("after_wake"))
		}
		f.AfterQueue = &docket.QueueCursor{WakeAt: at, RunID: runID}
	default:
		at, err := time.Parse(time.RFC3339Nano, q.Get("after_started"))
		if err != nil {
			return f, fmt.Errorf("%w: after_started %q is not an RFC 3339 time", errBadInput, q.Get("after_started"))
		}
		f.After = &docket.RunCursor{StartedAt: at, RunID: runID}
	}
	return f, nil
}

// values is the filter as query parameters, without the cursor.
func (f runsFilter) values(limitGiven bool) url.Values {
	v := url.Values{}
	for name, value := range map[string]string{"q": f.Query, "status": string(f.Status), "phase": string(f.Phase), "graph": f.Graph, "tenant": f.Tenant, "from": f.FromText, "to": f.ToText} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if f.Tenantless {
		v.Set("tenantless", "1")
	}
	if f.Newest {
		v.Set("order", string(orderNewest))
	}
	if limitGiven {
		v.Set("limit", strconv.Itoa(f.Limit))
	}
	return v
}

// scope is the filter's scope, or nil for every scope.
func (f runsFilter) scope() *docket.Scope {
	switch {
	case f.Tenantless:
		s := docket.Tenantless
		return &s
	case f.Tenant != "":
		s := docket.Tenant(f.Tenant)
		return &s
	}
	return nil
}

// runList is one page of a runs listing.
type runList struct {
	Runs []docket.Run
	// Next holds the cursor parameters of the next page; nil on the last.
	Next url.Values
}

// listRuns reads one page of the filtered runs in the filter's order.
func (h *Handler) listRuns(r *http.Request, f runsFilter) (runList, error) {
	switch f.order() {
	case orderRunID:
		return h.searchRuns(r, f)
	case orderAdmission:
		return h.queuedRuns(r, f)
	}
	return h.newestRuns(r, f)
}

// newestRuns reads one page of the filtered runs, newest first, and drops
// the runs started before the filter's from (the page is then the last).
func (h *Handler) newestRuns(r *http.Request, f runsFilter) (runList, error) {
	var page docket.RunPage
	var err error
	if scope := f.scope(); scope != nil {
		page, err = h.admin.ListRuns(r.Context(), docket.ListRunsRequest{Scope: *scope, GraphID: f.Graph, Status: f.Status, Phase: f.Phase, After: f.After, Limit: f.Limit})
	} else {
		page, err = h.admin.ListDomainRuns(r.Context(), docket.ListDomainRunsRequest{GraphID: f.Graph, Status: f.Status, Phase: f.Phase, After: f.After, Limit: f.Limit})
	}
	if err != nil {
		return runList{}, err
	}
	for i, run := range page.Runs {
		if !f.From.IsZero() && run.StartedAt.Before(f.From) {
			// Newest first: every later run started before from too.
			page.Runs, page.Next = page.Runs[:i], nil
			break
		}
	}
	out := runList{Runs: page.Runs}
	if page.Next != nil {
		out.Next = url.Values{"after_started": {page.Next.StartedAt.Format(time.RFC3339Nano)}, "after_run": {page.Next.RunID}}
	}
	return out, nil
}

// queuedRuns reads one page of the queued runs in admission order. A queued
// run is running, so any other status filter selects none.
func (h *Handler) queuedRuns(r *http.Request, f runsFilter) (runList, error) {
	if f.Status != "" && f.Status != docket.StatusRunning {
		return runList{}, nil
	}
	page, err := h.admin.ListQueuedRuns(r.Context(), docket.ListQueuedRunsRequest{
		Scope: f.scope(), GraphID: f.Graph, StartedFrom: f.From, StartedBefore: f.To, After: f.AfterQueue, Limit: f.Limit,
	})
	if err != nil {
		return runList{}, err
	}
	out := runList{Runs: page.Runs}
	if page.Next != nil {
		out.Next = url.Values{"after_wake": {page.Next.WakeAt.Format(time.RFC3339Nano)}, "after_run": {page.Next.RunID}}
	}
	return out, nil
}

// searchRuns reads one page of the runs whose id starts with the query, in
// run id order.
func (h *Handler) searchRuns(r *http.Request, f runsFilter) (runList, error) {
	page, err := h.admin.SearchRuns(r.Context(), docket.SearchRunsRequest{
		Prefix: f.Query, Scope: f.scope(), GraphID: f.Graph, Status: f.Status, Phase: f.Phase, After: f.AfterID, Limit: f.Limit,
	})
	if err != nil {
		return runList{}, err
	}
	out := runList{Runs: page.Runs}
	if page.Next != "" {
		out.Next = url.Values{"after_run": {page.Next}}
	}
	return out, nil
}

// runsPage serves "/runs": one page of runs of every scope or of one,
// filtered by status, phase, graph and start time, under tabs that count the
// filtered runs of each phase. The listing is newest first, except the
// queued tab's, in admission order by default, and a run id search's, in
// run id order (its tabs count nothing).
func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := runsFilterOf(q)
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	list, err := h.listRuns(r, f)
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	v := runsView{Filter: f, Statuses: statusOrder, Table: runTableOf(list.Runs, h.allowWrites), BulkMax: bulkMax, Order: f.order()}
	counts := docket.RunPhaseCounts{}
	if v.Order != orderRunID {
		counts, err = h.admin.CountRunPhases(r.Context(), docket.CountRunPhasesRequest{
			Scope: f.scope(), GraphID: f.Graph, Status: f.Status, StartedFrom: f.From, StartedBefore: f.To,
		})
		if err != nil {
			h.failErr(w, r, "runs", err)
			return
		}
		v.Counted = true
	}
	base := f.values(q.Has("limit"))
	unphased := cloneValues(base)
	unphased.Del("phase")
	unphased.Del("order")
	v.Tabs = append(v.Tabs, phaseTab{Label: "all", Runs: counts.Total, URL: h.prefix + "/runs?" + unphased.Encode(), Current: f.Phase == ""})
	for _, p := range docket.RunPhases() {
		tab := cloneValues(unphased)
		tab.Set("phase", string(p))
		v.Tabs = append(v.Tabs, phaseTab{Phase: p, Label: string(p), Runs: counts.Phases[p], URL: h.prefix + "/runs?" + tab.Encode(), Current: f.Phase == p})
	}
	if f.Phase == docket.PhaseQueued && f.Query == "" {
		admission := cloneValues(base)
		admission.Del("order")
		newest := cloneValues(admission)
		newest.Set("order", string(orderNewest))
		v.AdmissionURL = h.prefix + "/runs?" + admission.Encode()
		v.NewestURL = h.prefix + "/runs?" + newest.Encode()
	}
	for _, name := range []string{"q", "status", "phase", "graph", "tenant", "tenantless", "order", "from", "to"} {
		if base.Has(name) {
			v.Hidden = append(v.Hidden, hiddenField{Name: name, Value: base.Get(name)})
		}
	}
	if q.Has("after_run") {
		v.FirstURL = h.prefix + "/runs?" + base.Encode()
	}
	if list.Next != nil {
		next := cloneValues(base)
		for name, values := range list.Next {
			next[name] = values
		}
		v.NextURL = h.prefix + "/runs?" + next.Encode()
	}
	title := "Runs"
	if f.Query != "" {
		title = fmt.Sprintf("Runs whose id starts with %q", f.Query)
	}
	h.render(w, r, http.StatusOK, "runs", view{Title: title, Nav: "runs", Data: v})
}
