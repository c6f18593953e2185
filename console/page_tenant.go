package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

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
}

// tenantPage serves one scope: its counts, its cap override form and its
// newest runs.
func (h *Handler) tenantPage(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	h.renderTenant(w, r, scope, http.StatusOK, view{Notice: notice(r)})
}

// renderTenant renders the tenant page of scope with status and the
// messages of v.
func (h *Handler) renderTenant(w http.ResponseWriter, r *http.Request, scope docket.Scope, status int, v view) {
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
	v.Data = tenantView{Scope: scope, Inspection: ins, Runs: runTableOf(page.Runs, false), MoreRuns: page.Next != nil, RunsURL: h.prefix + "/runs?" + q.Encode()}
	h.render(w, r, status, "tenant", v)
}

// capAction applies a cap override edit ("op" set with "cap", or reset) as a
// compare-and-set on "expected_version". A stale edit re-renders the page
// with 409 and the current version, having changed nothing.
func (h *Handler) capAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	expected, err := strconv.ParseInt(r.PostFormValue("expected_version"), 10, 64)
	if err != nil {
		h.renderTenantError(w, r, scope, fmt.Errorf("%w: expected_version %q is not an integer", errBadInput, r.PostFormValue("expected_version")))
		return
	}
	opts := docket.ClaimPolicyWriteOptions{ExpectedVersion: &expected}
	var written docket.ClaimPolicyOverride
	switch op := r.PostFormValue("op"); op {
	case "set":
		capValue, err := strconv.Atoi(r.PostFormValue("cap"))
		if err != nil {
			h.renderTenantError(w, r, scope, fmt.Errorf("%w: got %q", docket.ErrInvalidCap, r.PostFormValue("cap")))
			return
		}
		written, err = h.admin.PutClaimPolicyOverride(r.Context(), scope, capValue, opts)
		if err != nil {
			h.renderTenantError(w, r, scope, err)
			return
		}
	case "reset":
		if written, err = h.admin.ResetClaimPolicyOverride(r.Context(), scope, opts); err != nil {
			h.renderTenantError(w, r, scope, err)
			return
		}
	default:
		h.renderTenantError(w, r, scope, fmt.Errorf("%w: op %q is neither set nor reset", errBadInput, op))
		return
	}
	q := url.Values{"done": {"cap"}, "version": {strconv.FormatInt(written.Version, 10)}}
	http.Redirect(w, r, h.prefix+scopePath(scope)+"?"+q.Encode(), http.StatusSeeOther)
}

// renderTenantError shows a refused edit on the tenant page with its status;
// a stale edit names both versions.
func (h *Handler) renderTenantError(w http.ResponseWriter, r *http.Request, scope docket.Scope, err error) {
	f := errorStatus(err)
	if f.status == http.StatusInternalServerError || f.status == http.StatusNotFound {
		h.fail(w, r, "cap", f)
		return
	}
	var stale *docket.StaleVersionError
	if errors.As(err, &stale) {
		f.message = fmt.Sprintf("Stale edit: the form was for version %d, but the override is now at version %d. Nothing was changed; the form below holds the current version.", stale.Expected, stale.Current)
	}
	h.logRefused(r, "cap", f)
	h.renderTenant(w, r, scope, f.status, view{Error: f.message})
}

// notices are the messages a redirect after a write may ask for by code.
var notices = map[string]string{
	"cap":            "Cap override saved (partition version %s).",
	"cancel":         "Run cancelled.",
	"resume":         "Run resumed.",
	"retry-poisoned": "Poisoned run retried.",
	"retry":          "Run retried.",
}

// notice is the message of r's "done" parameter, if any.
func notice(r *http.Request) string {
	q := r.URL.Query()
	format, ok := notices[q.Get("done")]
	if !ok {
		return ""
	}
	if q.Get("done") == "cap" {
		if _, err := strconv.ParseInt(q.Get("version"), 10, 64); err != nil {
			return ""
		}
		return fmt.Sprintf(format, q.Get("version"))
	}
	return format
}
