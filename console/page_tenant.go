package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/docketrun/docket-go/docket"
)

// tenantRuns is how many of its runs the tenant page lists.
const tenantRuns = 20

// tenantView is the tenant page's content.
type tenantView struct {
	Scope      docket.Scope
	Inspection docket.BrowsedTenant
	// Runs are the scope's newest runs; RunsURL lists them all.
	Runs    runTable
	RunsURL string
	// MoreRuns reports runs beyond those listed.
	MoreRuns bool
	// CapValue fills the cap field: what the operator typed into a refused
	// edit, else the effective cap; "" for none.
	CapValue string
	// Stale compares a stale edit with what is stored now; nil otherwise.
	Stale *staleCap
}

// staleCap is a cap edit refused as stale, next to the partition as it is
// now, which the page offers to apply the edit on.
type staleCap struct {
	// Op is the refused edit's op ("set" or "reset") and Cap the cap typed
	// for a set, as typed.
	Op, Cap string
	// Typed describes the refused edit, as "cap 7" or "reset to the default".
	Typed string
	// FormVersion is the version the refused form was for.
	FormVersion int64
	// Version is the partition version now stored, which the apply button
	// carries as its expected version, and Stored describes its cap.
	Version int64
	Stored  string
}

// capEdit is what the operator submitted in a cap form.
type capEdit struct {
	op, cap string
	// version is the form's expected version.
	version int64
}

// tenantPage serves one scope: its counts, its cap override form and its
// newest runs.
func (h *Handler) tenantPage(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	h.renderTenant(w, r, scope, http.StatusOK, view{Notice: notice(r)}, nil, false)
}

// renderTenant renders the tenant page of scope with status and the
// messages of v. A refused edit (nil for none) keeps its typed cap in the
// form, and a stale one is shown next to the partition as it is now.
func (h *Handler) renderTenant(w http.ResponseWriter, r *http.Request, scope docket.Scope, status int, v view, refused *capEdit, stale bool) {
	ins, err := h.admin.InspectTenant(r.Context(), scope)
	if err != nil {
		h.failErr(w, r, "tenant", err)
		return
	}
	page, err := h.admin.ListRuns(r.Context(), docket.ListRunsRequest{Scope: scope, Limit: tenantRuns})
	if err != nil {
		h.failErr(w, r, "tenant", err)
		return
	}
	q := url.Values{}
	if id, ok := scope.TenantID(); ok {
		q.Set("tenant", id)
	} else {
		q.Set("tenantless", "1")
	}
	v.Title = "Tenant " + scopeName(scope)
	v.Nav = "tenants"
	data := tenantView{Scope: scope, Inspection: ins, Runs: runTableOf(page.Runs, false), MoreRuns: page.Next != nil, RunsURL: h.prefix + "/runs?" + q.Encode()}
	if ins.Source != "" {
		data.CapValue = strconv.Itoa(ins.EffectiveMaxActiveRuns)
	}
	if refused != nil && refused.op == "set" {
		data.CapValue = refused.cap
	}
	if refused != nil && stale {
		data.Stale = &staleCap{Op: refused.op, Cap: refused.cap, Typed: "reset to the default", FormVersion: refused.version,
			Version: ins.PartitionVersion, Stored: storedCap(ins)}
		if refused.op == "set" {
			data.Stale.Typed = "cap " + refused.cap
		}
	}
	v.Data = data
	h.render(w, r, status, "tenant", v)
}

// storedCap describes the cap a scope has now.
func storedCap(ins docket.BrowsedTenant) string {
	switch ins.Source {
	case docket.CapFromOverride:
		return fmt.Sprintf("cap %d (override)", ins.EffectiveMaxActiveRuns)
	case docket.CapFromDefault:
		return fmt.Sprintf("cap %d (the default; no override)", ins.EffectiveMaxActiveRuns)
	}
	return "no cap (no override and no initialized default)"
}

// capAction applies a cap override edit ("op" set with "cap", or reset) as a
// compare-and-set on "expected_version". A stale edit re-renders the page
// with 409 and the current version, having changed nothing.
func (h *Handler) capAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	edit := &capEdit{op: r.PostFormValue("op"), cap: r.PostFormValue("cap")}
	expected, err := strconv.ParseInt(r.PostFormValue("expected_version"), 10, 64)
	if err != nil {
		h.renderTenantError(w, r, scope, edit, fmt.Errorf("%w: expected_version %q is not an integer", errBadInput, r.PostFormValue("expected_version")))
		return
	}
	edit.version = expected
	opts := docket.ClaimPolicyWriteOptions{ExpectedVersion: &expected}
	var written docket.ClaimPolicyOverride
	switch edit.op {
	case "set":
		capValue, err := strconv.Atoi(edit.cap)
		if err != nil {
			h.renderTenantError(w, r, scope, edit, fmt.Errorf("%w: got %q", docket.ErrInvalidCap, edit.cap))
			return
		}
		written, err = h.admin.PutClaimPolicyOverride(r.Context(), scope, capValue, opts)
		if err != nil {
			h.renderTenantError(w, r, scope, edit, err)
			return
		}
	case "reset":
		if written, err = h.admin.ResetClaimPolicyOverride(r.Context(), scope, opts); err != nil {
			h.renderTenantError(w, r, scope, edit, err)
			return
		}
	default:
		h.renderTenantError(w, r, scope, edit, fmt.Errorf("%w: op %q is neither set nor reset", errBadInput, edit.op))
		return
	}
	q := url.Values{"done": {"cap"}, "version": {strconv.FormatInt(written.Version, 10)}}
	http.Redirect(w, r, h.prefix+scopePath(scope)+"?"+q.Encode(), http.StatusSeeOther)
}

// pauseAction pauses ("op" pause) or resumes ("op" resume) the scope as a
// compare-and-set on "expected_version". A stale write re-renders the page
// with 409 and the current state, having changed nothing.
func (h *Handler) pauseAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	op := r.PostFormValue("op")
	expected, err := strconv.ParseInt(r.PostFormValue("expected_version"), 10, 64)
	if err != nil {
		h.renderPauseError(w, r, scope, fmt.Errorf("%w: expected_version %q is not an integer", errBadInput, r.PostFormValue("expected_version")))
		return
	}
	opts := docket.ClaimPolicyWriteOptions{ExpectedVersion: &expected}
	var written docket.TenantPause
	switch op {
	case "pause":
		written, err = h.admin.PauseTenant(r.Context(), scope, opts)
	case "resume":
		written, err = h.admin.ResumeTenant(r.Context(), scope, opts)
	default:
		err = fmt.Errorf("%w: op %q is neither pause nor resume", errBadInput, op)
	}
	if err != nil {
		h.renderPauseError(w, r, scope, err)
		return
	}
	q := url.Values{"done": {"tenant-" + op}, "version": {strconv.FormatInt(written.Version, 10)}}
	http.Redirect(w, r, h.prefix+scopePath(scope)+"?"+q.Encode(), http.StatusSeeOther)
}

// renderPauseError shows a refused pause or resume on the tenant page with
// its status; a stale one names both versions.
func (h *Handler) renderPauseError(w http.ResponseWriter, r *http.Request, scope docket.Scope, err error) {
	f := errorStatus(err)
	if f.status == http.StatusInternalServerError || f.status == http.StatusNotFound {
		h.fail(w, r, "pause", f)
		return
	}
	var stale *docket.StaleVersionError
	if errors.As(err, &stale) {
		f.message = fmt.Sprintf("Stale pause or resume: the page was for partition version %d, but the partition is now at version %d. Nothing was changed; the page shows the tenant as it is now.", stale.Expected, stale.Current)
	}
	h.logRefused(r, "pause", f)
	h.renderTenant(w, r, scope, f.status, view{Error: f.message}, nil, false)
}

// renderTenantError shows a refused edit on the tenant page with its status,
// keeping what the operator typed; a stale edit names both versions and is
// shown next to the partition as it is now, with a button that applies it
// on the new version.
func (h *Handler) renderTenantError(w http.ResponseWriter, r *http.Request, scope docket.Scope, edit *capEdit, err error) {
	f := errorStatus(err)
	if f.status == http.StatusInternalServerError || f.status == http.StatusNotFound {
		h.fail(w, r, "cap", f)
		return
	}
	var stale *docket.StaleVersionError
	isStale := errors.As(err, &stale)
	if isStale {
		f.message = fmt.Sprintf("Stale edit: the form was for version %d, but the override is now at version %d. Nothing was changed; compare the two below and apply yours on the new version, or edit it.", stale.Expected, stale.Current)
	}
	h.logRefused(r, "cap", f)
	h.renderTenant(w, r, scope, f.status, view{Error: f.message}, edit, isStale)
}

// notices are the messages a redirect after a write may ask for by code.
var notices = map[string]string{
	"cap":             "Cap override saved (partition version %s).",
	"domain-pause":    "Domain paused (policy version %s): no run is admitted or leased until it is resumed.",
	"domain-resume":   "Domain resumed (policy version %s).",
	"tenant-pause":    "Tenant paused (partition version %s).",
	"tenant-resume":   "Tenant resumed (partition version %s).",
	"schedule-pause":  "Schedule paused (schedule version %s).",
	"schedule-resume": "Schedule resumed (schedule version %s).",
	"schedule-remove": "Schedule removed (it was at version %s); the runs it inserted stay.",
	"cancel":          "Run cancelled.",
	"resume":          "Run resumed.",
	"retry-poisoned":  "Poisoned run retried.",
	"retry":           "Run retried.",
}

// notice is the message of r's "done" parameter, if any.
func notice(r *http.Request) string {
	q := r.URL.Query()
	format, ok := notices[q.Get("done")]
	if !ok {
		return ""
	}
	if strings.Contains(format, "%s") {
		if _, err := strconv.ParseInt(q.Get("version"), 10, 64); err != nil {
			return ""
		}
		return fmt.Sprintf(format, q.Get("version"))
	}
	return format
}
