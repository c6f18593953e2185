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
	Runs     []docket.Run
	Statuses []docket.RunStatus
	// NextURL continues the listing; "" on the last page. FirstURL
	// restarts it; "" on the first page.
	NextURL, FirstURL string
}

// runsFilter is the runs page's parsed query.
type runsFilter struct {
	Status     docket.RunStatus
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
		Status: docket.RunStatus(q.Get("status")), Graph: q.Get("graph"),
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
	for name, value := range map[string]string{"status": string(f.Status), "graph": f.Graph, "tenant": f.Tenant, "from": f.FromText, "to": f.ToText} {
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

// runsPage serves "/runs": one page of runs, newest first, of every scope
// or of one, filtered by status, graph and start time.
func (h *Handler) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f, err := runsFilterOf(q)
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	var page docket.RunPage
	switch {
	case f.Tenantless || f.Tenant != "":
		scope := docket.Tenantless
		if !f.Tenantless {
			scope = docket.Tenant(f.Tenant)
		}
		page, err = h.admin.ListRuns(r.Context(), docket.ListRunsRequest{Scope: scope, GraphID: f.Graph, Status: f.Status, After: f.After, Limit: f.Limit})
	default:
		page, err = h.admin.ListDomainRuns(r.Context(), docket.ListDomainRunsRequest{GraphID: f.Graph, Status: f.Status, After: f.After, Limit: f.Limit})
	}
	if err != nil {
		h.failErr(w, r, "runs", err)
		return
	}
	v := runsView{Filter: f, Statuses: statusOrder}
	for _, run := range page.Runs {
		if !f.From.IsZero() && run.StartedAt.Before(f.From) {
			// Newest first: every later run started before from too.
			page.Next = nil
			break
		}
		v.Runs = append(v.Runs, run)
	}
	base := f.values(q.Has("limit"))
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
