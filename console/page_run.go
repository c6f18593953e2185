package console

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/docketrun/docket-go/docket"
)

// runView is the run page's content. It never holds the claim token: the
// facade's Run and RunInspection carry none.
type runView struct {
	Run        docket.Run
	Inspection docket.RunInspection
	// State is the run document, indented.
	State string
	// Actions are the actions the run's status allows.
	Actions []runActionLink
}

// runActionLink is one action button.
type runActionLink struct {
	Name  string
	Label string
	URL   string
}

// runPage serves one run: state, checkpoint, attempts, claim, poison and
// admission state, and the actions its status allows.
func (h *Handler) runPage(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	h.renderRun(w, r, scope, http.StatusOK, view{Notice: notice(r)})
}

// renderRun renders the run page with status and the messages of v.
func (h *Handler) renderRun(w http.ResponseWriter, r *http.Request, scope docket.Scope, status int, v view) {
	runID := r.PathValue("run")
	run, err := h.admin.FetchRun(r.Context(), scope, runID)
	if err != nil {
		h.failErr(w, r, "run", err)
		return
	}
	ins, err := h.admin.InspectRun(r.Context(), scope, runID)
	if err != nil {
		h.failErr(w, r, "run", err)
		return
	}
	data := runView{Run: run, Inspection: ins, State: string(run.State)}
	var indented bytes.Buffer
	if json.Indent(&indented, run.State, "", "  ") == nil {
		data.State = indented.String()
	}
	for _, a := range runActions {
		if a.transition.Allows(run) {
			name := string(a.transition)
			data.Actions = append(data.Actions, runActionLink{Name: name, Label: a.label, URL: h.prefix + runPath(scope, runID) + "/" + name})
		}
	}
	v.Title = "Run " + runID
	v.Nav = "runs"
	v.Data = data
	h.render(w, r, status, "run", v)
}
