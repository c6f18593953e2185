package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

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

// scheduleRow is one schedule of the page with its buttons.
type scheduleRow struct {
	docket.PeriodicSchedule
	// Cadence describes the ticks: "cron EXPR (ZONE)" or "every DURATION".
	Cadence string
	// Overdue reports a running schedule whose next tick is before the
	// page's time: no Worker with Schedules set has taken it yet.
	Overdue bool
	// Action is "pause" for a running schedule and "resume" for a paused
	// one; ActionURL is where its button posts.
	Action, ActionURL string
	// RemoveURL is the removal's confirmation page.
	RemoveURL string
	// RunsURL lists the runs the schedule's ticks inserted: the run id
	// search for its tick run ids' prefix, in its scope.
	RunsURL string
}

// scheduleRemove is the path segment of a schedule's removal, which, unlike
// the scheduleActions, posts from its confirmation page only.
const scheduleRemove = "remove"

// scheduleActions are the schedule edits the page's buttons apply at once,
// by the path segment that names them.
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
	now := time.Now()
	for _, s := range page.Schedules {
		row := scheduleRow{PeriodicSchedule: s, Cadence: cadenceOf(s), Action: "pause", Overdue: !s.Paused && s.NextTickAt.Before(now)}
		if s.Paused {
			row.Action = "resume"
		}
		path := h.prefix + schedulePath(s.Scope, s.Name)
		row.ActionURL = path + "/" + row.Action
		row.RemoveURL = path + "/" + scheduleRemove
		row.RunsURL = h.prefix + "/runs?" + scheduleRunsQuery(s.Scope, s.Name).Encode()
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

// scheduleRunsQuery is the runs page query of the runs a schedule's ticks
// inserted: each tick's run id is ScheduleRunID's, so they share the prefix
// up to the "@" before the tick's time, and the scope filter keeps out the
// ids of another scope that share it (a tenant id may hold "@").
func scheduleRunsQuery(scope docket.Scope, name string) url.Values {
	id := docket.ScheduleRunID(scope, name, time.Time{})
	q := url.Values{"q": {id[:strings.LastIndex(id, "@")+1]}}
	if tenant, ok := scope.TenantID(); ok {
		q.Set("tenant", tenant)
	} else {
		q.Set("tenantless", "1")
	}
	return q
}

// scheduleAction serves POST .../{name}/{action}: a pause, resume or
// removal as a compare-and-set on "expected_version", then a redirect to
// the schedules page. A removal needs its confirmation page's "confirm"
// field; without it the browser is sent to that page. A stale form is
// refused with 409, both versions named and nothing changed.
func (h *Handler) scheduleAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	name := r.PathValue("name")
	actionName := r.PathValue("action")
	action, ok := scheduleActions[actionName]
	if actionName == scheduleRemove {
		if r.PostFormValue("confirm") != "yes" {
			// A removal is applied from its confirmation page only;
			// anything else is sent there, having changed nothing.
			http.Redirect(w, r, h.prefix+schedulePath(scope, name)+"/"+scheduleRemove, http.StatusSeeOther)
			return
		}
		action, ok = removeSchedule, true
	}
	if !ok {
		h.fail(w, r, "schedule_action", failure{status: http.StatusNotFound, class: "not_found", message: "No such schedule action."})
		return
	}
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
	q := url.Values{"done": {"schedule-" + actionName}, "version": {strconv.FormatInt(written.Version, 10)}}
	http.Redirect(w, r, h.prefix+"/schedules?"+q.Encode(), http.StatusSeeOther)
}

// removeSchedule removes a schedule and returns it as it was, whose version
// the notice names.
func removeSchedule(a *docket.Admin) func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error) {
	return func(r *http.Request, scope docket.Scope, name string, opts docket.ScheduleWriteOptions) (docket.PeriodicSchedule, error) {
		if err := a.RemoveSchedule(r.Context(), scope, name, opts); err != nil {
			return docket.PeriodicSchedule{}, err
		}
		return docket.PeriodicSchedule{Scope: scope, Name: name, Version: *opts.ExpectedVersion}, nil
	}
}

// scheduleRemoveView is the removal confirmation page's content.
type scheduleRemoveView struct {
	Schedule scheduleRow
	// BackURL is the schedules page, the way back without removing;
	// ActionURL is where the confirmation posts.
	BackURL, ActionURL string
}

// scheduleRemovePage serves GET .../{name}/remove: what removing the
// schedule does and a form that does it on the version shown, so a removal
// takes two deliberate clicks without any script.
func (h *Handler) scheduleRemovePage(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	if !h.allowWrites {
		h.fail(w, r, "schedule_remove", failure{status: http.StatusForbidden, class: "read_only", message: "This console is read-only: writes are disabled."})
		return
	}
	name := r.PathValue("name")
	s, err := h.admin.FetchSchedule(r.Context(), scope, name)
	if err != nil {
		h.failErr(w, r, "schedule_remove", err)
		return
	}
	row := scheduleRow{PeriodicSchedule: s, Cadence: cadenceOf(s), Overdue: !s.Paused && s.NextTickAt.Before(time.Now()),
		RunsURL: h.prefix + "/runs?" + scheduleRunsQuery(s.Scope, s.Name).Encode()}
	h.render(w, r, http.StatusOK, "schedule-remove", view{Title: fmt.Sprintf("Remove schedule %s of %s?", name, scopeName(scope)), Nav: "schedules",
		Data: scheduleRemoveView{Schedule: row, BackURL: h.prefix + "/schedules", ActionURL: h.prefix + schedulePath(scope, name) + "/" + scheduleRemove}})
}
