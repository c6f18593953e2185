package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/docketrun/docket-go/docket"
)

// statusOrder lists every run status in the order the domain page shows.
var statusOrder = []docket.RunStatus{docket.StatusRunning, docket.StatusWaiting, docket.StatusDone, docket.StatusFailed, docket.StatusCancelled}

// domainView is the domain page's content.
type domainView struct {
	docket.DomainOverview
	// Walk names the TenantFair walk: "parked" or "spec".
	Walk string
	// Statuses are the run counts in statusOrder, zeros included.
	Statuses []statusCount
	// Chart scales the activity for the chart: a bar group per minute and
	// the axes' labels.
	Chart activityChart
	// Phases are the run counts of every phase, zeros included.
	Phases []phaseCount
}

// phaseCount is one row of the runs-by-phase table.
type phaseCount struct {
	Phase docket.RunPhase
	Runs  int64
}

// statusCount is one row of the runs-by-status table.
type statusCount struct {
	Status docket.RunStatus
	Runs   int64
}

func (h *Handler) domainView(r *http.Request) (domainView, error) {
	ov, err := h.admin.DomainOverview(r.Context())
	if err != nil {
		return domainView{}, err
	}
	v := domainView{DomainOverview: ov, Walk: "spec walk (full ring)", Chart: activityChartOf(ov.Activity)}
	if ov.Policy.ParkDormant {
		v.Walk = "parked walk (awake ring only)"
	}
	for _, s := range statusOrder {
		v.Statuses = append(v.Statuses, statusCount{Status: s, Runs: ov.RunsByStatus[s]})
	}
	for _, p := range docket.RunPhases() {
		v.Phases = append(v.Phases, phaseCount{Phase: p, Runs: ov.RunsByPhase[p]})
	}
	return v, nil
}

// domainPage serves "/": the domain's engine, policy, cursor and ring, its
// runs by phase and by status and its activity.
func (h *Handler) domainPage(w http.ResponseWriter, r *http.Request) {
	h.renderDomain(w, r, http.StatusOK, view{Notice: notice(r)})
}

// renderDomain renders the domain page with status and v's messages.
func (h *Handler) renderDomain(w http.ResponseWriter, r *http.Request, status int, v view) {
	data, err := h.domainView(r)
	if err != nil {
		h.failErr(w, r, "domain", err)
		return
	}
	v.Title, v.Nav, v.Data = "Domain", "domain", data
	h.render(w, r, status, "domain", v)
}

// domainPauseAction pauses ("op" pause) or resumes ("op" resume) the whole
// domain as a compare-and-set on the policy version ("expected_version"). A
// refused write re-renders the domain page with its status, having changed
// nothing.
func (h *Handler) domainPauseAction(w http.ResponseWriter, r *http.Request) {
	op := r.PostFormValue("op")
	expected, err := strconv.ParseInt(r.PostFormValue("expected_version"), 10, 64)
	if err != nil {
		h.renderDomainPauseError(w, r, fmt.Errorf("%w: expected_version %q is not an integer", errBadInput, r.PostFormValue("expected_version")))
		return
	}
	opts := docket.ClaimPolicyWriteOptions{ExpectedVersion: &expected}
	var written docket.ClaimPolicyDefault
	switch op {
	case "pause":
		written, err = h.admin.PauseDomain(r.Context(), opts)
	case "resume":
		written, err = h.admin.ResumeDomain(r.Context(), opts)
	default:
		err = fmt.Errorf("%w: op %q is neither pause nor resume", errBadInput, op)
	}
	if err != nil {
		h.renderDomainPauseError(w, r, err)
		return
	}
	q := url.Values{"done": {"domain-" + op}, "version": {strconv.FormatInt(written.Version, 10)}}
	http.Redirect(w, r, h.prefix+"/?"+q.Encode(), http.StatusSeeOther)
}

// renderDomainPauseError shows a refused domain pause or resume on the
// domain page; a stale one names both versions.
func (h *Handler) renderDomainPauseError(w http.ResponseWriter, r *http.Request, err error) {
	f := errorStatus(err)
	if f.status == http.StatusInternalServerError || f.status == http.StatusNotFound {
		h.fail(w, r, "domain_pause", f)
		return
	}
	if stale, ok := errors.AsType[*docket.StaleVersionError](err); ok {
		f.message = fmt.Sprintf("Stale pause or resume: the page was for policy version %d, but the policy is now at version %d. Nothing was changed; the page shows the domain as it is now.", stale.Expected, stale.Current)
	}
	h.logRefused(r, "domain_pause", f)
	h.renderDomain(w, r, f.status, view{Error: f.message})
}

// domainFragment serves the domain page's live section alone, which the
// page's script fetches to refresh it in place.
func (h *Handler) domainFragment(w http.ResponseWriter, r *http.Request) {
	v, err := h.domainView(r)
	if err != nil {
		f := errorStatus(err)
		h.logRefused(r, "domain_fragment", f)
		http.Error(w, http.StatusText(f.status), f.status)
		return
	}
	h.writeTemplate(w, r, http.StatusOK, "domain", "live", v)
}
