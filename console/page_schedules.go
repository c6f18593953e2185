package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// schedulesView is the schedules page's content.
type schedulesView struct {
	Schedules []scheduleRow
	// Tenant and Tenantless are the scope filter, kept for the form.
	Tenant     string
	Tenantless bool
	// NextURL continues the listing; "" on the last page. FirstURL
	// restarts it; "" on the first page.
	NextURL, FirstURL string
}

// scheduleRow is one schedule of the page with its pause or resume button.
type scheduleRow struct {
	docket.PeriodicSchedule
	// Cadence describes the ticks: "cron EXPR (ZONE)" or "every DURATION".
	Cadence string
	// Action is "pause" for a running schedule and "resume" for a paused
	// one; ActionURL is where its button posts.
	Action, ActionURL string
}

// scheduleActions are the schedule edits the page offers, by the path
// segment that names them.
var scheduleActions = map[string]func(a *docket.Admin) func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error){
	"pause": func(a *docket.Admin) func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error) {
		return func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error) {
			return a.PauseSchedule(r.Context(), scope, name, opts)
		}
	},
	"resume": func(a *docket.Admin) func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error) {
		return func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error) {
			return a.ResumeSchedule(r.Context(), scope, name, opts)
		}
	},
}

// schedulePath is the path of a schedule of s, which its actions follow.
func schedulePath(s docket.Scope, name string) string {
	if id, ok := s.TenantID(); ok {
		return "/schedules/" + url.PathEscape(id) + "/" + url.PathEscape(name)
	}
	return "/tenantless/schedules/" + url.PathEscape(name)
}

// cadenceOf describes a schedule's ticks.
func cadenceOf(s docket.PeriodicSchedule) string {
	if s.Cron != "" {
		return "cron " + s.Cron + " (" + s.TimeZone + ")"
	}
	return "every " + s.Every.String()
}

// schedulesPage serves "/schedules": one keyset page of the domain's
// schedules in (scope, name) order, of every scope or of one.
func (h *Handler) schedulesPage(w http.ResponseWriter, r *http.Request) {
	h.renderSchedules(w, r, http.StatusOK, view{Notice: notice(r)})
}

// renderSchedules renders the schedules page of r's query with status and
// the messages of v.
func (h *Handler) renderSchedules(w http.ResponseWriter, r *http.Request, status int, v view) {
	q := r.URL.Query()
	req := docket.ListSchedulesRequest{}
	data := schedulesView{Tenant: q.Get("tenant"), Tenantless: q.Get("tenantless") == "1"}
	base := url.Values{}
	switch {
	case data.Tenantless:
		s := docket.Tenantless
		req.Scope = &s
		base.Set("tenantless", "1")
	case data.Tenant != "":
		s := docket.Tenant(data.Tenant)
		req.Scope = &s
		base.Set("tenant", data.Tenant)
	}
	var err error
	if req.Limit, err = pageSize(q); err != nil {
		h.failErr(w, r, "schedules", err)
		return
	}
	if q.Has("limit") {
		base.Set("limit", strconv.Itoa(req.Limit))
	}
	if q.Has("after_name") {
		req.After = &docket.ScheduleCursor{Scope: docket.Tenant(q.Get("after_t")), Name: q.Get("after_name")}
		if q.Get("after_tl") == "1" {
			req.After.Scope = docket.Tenantless
		}
		data.FirstURL = h.prefix + "/schedules?" + base.Encode()
	}
	page, err := h.admin.ListSchedules(r.Context(), req)
	if err != nil {
		h.failErr(w, r, "schedules", err)
		return
	}
	for _, s := range page.Schedules {
		row := scheduleRow{PeriodicSchedule: s, Cadence: cadenceOf(s), Action: "pause"}
		if s.Paused {
			row.Action = "resume"
		}
		row.ActionURL = h.prefix + schedulePath(s.Scope, s.Name) + "/" + row.Action
		data.Schedules = append(data.Schedules, row)
	}
	if page.Next != nil {
		next := cloneValues(base)
		next.Set("after_name", page.Next.Name)
		if id, ok := page.Next.Scope.TenantID(); ok {
			next.Set("after_t", id)
		} else {
			next.Set("after_tl", "1")
		}
		data.NextURL = h.prefix + "/schedules?" + next.Encode()
	}
	v.Title = "Schedules"
	v.Nav = "schedules"
	v.Data = data
	h.render(w, r, status, "schedules", v)
}

// scheduleAction serves POST .../{name}/{action}: a pause or resume as a
// compare-and-set on "expected_version", then a redirect to the schedules
// page. A stale form is refused with 409, both versions named and nothing
// changed.
func (h *Handler) scheduleAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	action, ok := scheduleActions[r.PathValue("action")]
	if !ok {
		h.fail(w, r, "schedule_action", failure{status: http.StatusNotFound, class: "not_found", message: "No such schedule action."})
		return
	}
	name := r.PathValue("name")
	expected, err := strconv.ParseInt(r.PostFormValue("expected_version"), 10, 64)
	if err != nil {
		h.failErr(w, r, "schedule_action", fmt.Errorf("%w: expected_version %q is not an integer", errBadInput, r.PostFormValue("expected_version")))
		return
	}
	written, err := action(h.admin)(r, scope, name, docket.ScheduleWriteOptions{ExpectedVersion: &expected})
	var stale *docket.StaleVersionError
	switch {
	case errors.As(err, &stale):
		f := errorStatus(err)
		f.message = fmt.Sprintf("Stale edit: the form was for version %d of schedule %q of %s, but the schedule is now at version %d. Nothing was changed; the list below holds the current version.",
			stale.Expected, name, scopeName(scope), stale.Current)
		h.logRefused(r, "schedule_action", f)
		r.URL.RawQuery = ""
		h.renderSchedules(w, r, f.status, view{Error: f.message})
		return
	case err != nil:
		h.failErr(w, r, "schedule_action", err)
		return
	}
	q := url.Values{"done": {"schedule-" + r.PathValue("action")}, "version": {strconv.FormatInt(written.Version, 10)}}
	http.Redirect(w, r, h.prefix+"/schedules?"+q.Encode(), http.StatusSeeOther)
}
