package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// runsView is the runs page's content.
type runsView struct {
	Filter   runsFilter
	Table    runTable
	Statuses []docket.RunStatus
	// Tabs are the phase tabs, "all" first, each with its count over the
	// filtered runs.
	Tabs []phaseTab
	// Hidden is the filter as hidden fields of the bulk form.
	Hidden []hiddenField
	// BulkMax is the most runs a bulk action applies to.
	BulkMax int
	// NextURL continues the listing; "" on the last page. FirstURL
	// restarts it; "" on the first page.
	NextURL, FirstURL string
}

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
	Status     docket.RunStatus
	Phase      docket.RunPhase
	Graph      string
	Tenant     string
	Tenantless bool
	// From and To bound StartedAt: From inclusive, To exclusive; the raw
	// texts are kept for the form.
	From, To         time.Time
	FromText, ToText string
	Limit            int
	After            *docket.RunCursor
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
		Status: docket.RunStatus(q.Get("status")), Phase: docket.RunPhase(q.Get("phase")), Graph: q.Get("graph"),
		Tenant: q.Get("tenant"), Tenantless: q.Get("tenantless") == "1",
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
	if f.Limit, err = pageSize(q); err != nil {
		return f, err
	}
	if q.Has("after_run") {
		at, err := time.Parse(time.RFC3339Nano, q.Get("after_started"))
		if err != nil {
			return f, fmt.Errorf("%w: after_started %q is not an RFC 3339 time", errBadInput, q.Get("after_started"))
		}
		f.After = &docket.RunCursor{StartedAt: at, RunID: q.Get("after_run")}
	} else if !f.To.IsZero() {
		// Newest first, strictly after (to, ""): exactly the runs started
		// before to, since no run id sorts below "".
		f.After = &docket.RunCursor{StartedAt: f.To}
	}
	return f, nil
}

// values is the filter as query parameters, without the cursor.
func (f runsFilter) values(limitGiven bool) url.Values {
	v := url.Values{}
	for name, value := range map[string]string{"status": string(f.Status), "phase": string(f.Phase), "graph": f.Graph, "tenant": f.Tenant, "from": f.FromText, "to": f.ToText} {
		if value != "" {
			v.Set(name, value)
		}
	}
	if f.Tenantless {
		v.Set("tenantless", "1")
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

// listRuns reads one page of the filtered runs, newest first, and drops the
// runs started before the filter's from (Next is then nil).
func (h *Handler) listRuns(r *http.Request, f runsFilter) (docket.RunPage, error) {
	var page docket.RunPage
	var err error
	if scope := f.scope(); scope != nil {
		page, err = h.admin.ListRuns(r.Context(), docket.ListRunsRequest{Scope: *scope, GraphID: f.Graph, Status: f.Status, Phase: f.Phase, After: f.After, Limit: f.Limit})
	} else {
		page, err = h.admin.ListDomainRuns(r.Context(), docket.ListDomainRunsRequest{GraphID: f.Graph, Status: f.Status, Phase: f.Phase, After: f.After, Limit: f.Limit})
	}
	if err != nil {
		return docket.RunPage{}, err
	}
	for i, run := range page.Runs {
		if !f.From.IsZero() && run.StartedAt.Before(f.From) {
			// Newest first: every later run started before from too.
			page.Runs, page.Next = page.Runs[:i], nil
			break
		}
	}
	return page, nil
}

// runsPage serves "/runs": one page of runs, newest first, of every scope
// or of one, filtered by status, phase, graph and start time, under tabs
// that count the filtered runs of each phase.
func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := runsFilterOf(q)
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	page, err := h.listRuns(r, f)
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	counts, err := h.admin.CountRunPhases(r.Context(), docket.CountRunPhasesRequest{
		Scope: f.scope(), GraphID: f.Graph, Status: f.Status, StartedFrom: f.From, StartedBefore: f.To,
	})
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	v := runsView{Filter: f, Statuses: statusOrder, Table: runTableOf(page.Runs, h.allowWrites), BulkMax: bulkMax}
	base := f.values(q.Has("limit"))
	unphased := cloneValues(base)
	unphased.Del("phase")
	v.Tabs = append(v.Tabs, phaseTab{Label: "all", Runs: counts.Total, URL: h.prefix + "/runs?" + unphased.Encode(), Current: f.Phase == ""})
	for _, p := range docket.RunPhases() {
		tab := cloneValues(unphased)
		tab.Set("phase", string(p))
		v.Tabs = append(v.Tabs, phaseTab{Phase: p, Label: string(p), Runs: counts.Phases[p], URL: h.prefix + "/runs?" + tab.Encode(), Current: f.Phase == p})
	}
	for _, name := range []string{"status", "phase", "graph", "tenant", "tenantless", "from", "to"} {
		if base.Has(name) {
			v.Hidden = append(v.Hidden, hiddenField{Name: name, Value: base.Get(name)})
		}
	}
	if q.Has("after_run") {
		v.FirstURL = h.prefix + "/runs?" + base.Encode()
	}
	if page.Next != nil {
		next := cloneValues(base)
		next.Set("after_started", page.Next.StartedAt.Format(time.RFC3339Nano))
		next.Set("after_run", page.Next.RunID)
		v.NextURL = h.prefix + "/runs?" + next.Encode()
	}
	h.render(w, r, http.StatusOK, "runs", view{Title: "Runs", Nav: "runs", Data: v})
}
