package console

import (
	"net/http"

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
	v, err := h.domainView(r)
	if err != nil {
		h.failErr(w, r, "domain", err)
		return
	}
	h.render(w, r, http.StatusOK, "domain", view{Title: "Domain", Nav: "domain", Data: v})
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
