package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/docketrun/docket-go/docket"
)

// queuesView is the queues page's content: the database's domains, each
// with its runs counted by phase.
type queuesView struct {
	// Phases are the columns, in the runs page's tab order.
	Phases []docket.RunPhase
	Rows   []queueRow
}

// queueRow is one domain of the queues page.
type queueRow struct {
	Domain string
	// Link is the domain's console.
	Link string
	// Counts are the domain's runs by phase, one per column; Total counts
	// them all and TotalURL lists them.
	Counts   []queueCell
	Total    int64
	TotalURL string
	// Error says why the domain was not counted; "" when it was.
	Error string
}

// queueCell is one cell of the queues page: a phase's runs and the link
// to them.
type queueCell struct {
	Phase docket.RunPhase
	Runs  int64
	URL   string
}

// queuesPage serves the all-domains console's "/": every Docket domain
// (queue) of the database, each with its runs counted by phase by its own
// console's CountRunPhases, one statement per domain at the database
// clock. A domain at another schema version is listed with the reason
// instead of counts.
func (h *Handler) queuesPage(w http.ResponseWriter, r *http.Request) {
	domains, err := docket.ListDomains(r.Context(), h.domains.cfg.Pool)
	if err != nil {
		h.failErr(w, r, "queues", err)
		return
	}
	v := queuesView{Phases: docket.RunPhases()}
	for _, schema := range domains {
		link := h.prefix + domainsPath + url.PathEscape(schema) + "/"
		row := queueRow{Domain: schema, Link: link, TotalURL: link + "runs"}
		counts, err := h.domainCounts(r, schema)
		switch {
		case errors.Is(err, docket.ErrSchemaMismatch):
			row.Error = err.Error()
		case err != nil:
			h.failErr(w, r, "queues", err)
			return
		}
		row.Total = counts.Total
		for _, p := range v.Phases {
			row.Counts = append(row.Counts, queueCell{Phase: p, Runs: counts.Phases[p], URL: link + "runs?phase=" + url.QueryEscape(string(p))})
		}
		v.Rows = append(v.Rows, row)
	}
	h.render(w, r, http.StatusOK, "queues", view{Title: "Queues", Nav: "queues", Data: v})
}

// domainCounts counts the runs of domain schema by phase through its
// console.
func (h *Handler) domainCounts(r *http.Request, schema string) (docket.RunPhaseCounts, error) {
	domain, err := h.domains.handler(r, schema)
	if err != nil {
		return docket.RunPhaseCounts{}, err
	}
	counts, err := domain.admin.CountRunPhases(r.Context(), docket.CountRunPhasesRequest{})
	if err != nil {
		return docket.RunPhaseCounts{}, fmt.Errorf("domain %q: %w", schema, err)
	}
	return counts, nil
}
