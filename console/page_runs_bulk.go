package console

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/docketrun/docket-go/docket"
)

// bulkMax is the most runs one bulk action applies to: "all runs matching
// this filter" takes the first bulkMax of them in the listing's order.
const bulkMax = docket.MaxListLimit

// bulkListed is how many run ids the confirmation lists before it counts
// the rest.
const bulkListed = 50

// bulkActions are the run actions the runs page applies in bulk.
var bulkActions = []docket.Transition{docket.TransitionRetry, docket.TransitionCancel}

// bulkView is the content of the bulk confirmation and result pages.
type bulkView struct {
	// Name is the action's transition name, which the apply form posts;
	// Label is its button's label.
	Name, Label string
	// Keys name every run the action applies to, in list order.
	Keys []string
	// Listed are the first bulkListed runs; More counts the rest.
	Listed []bulkRun
	More   int
	// Capped reports a filter that matched more than bulkMax runs.
	Capped  bool
	BulkMax int
	// Results are the outcomes of an applied action, one per run.
	Results []bulkResult
	// Done and Refused count the results.
	Done, Refused int
	// BackURL returns to the runs page.
	BackURL string
}

// bulkRun is one run of a bulk action.
type bulkRun struct {
	Scope docket.Scope
	RunID string
}

// bulkResult is what the action did to one run: done, or refused with the
// reason.
type bulkResult struct {
	bulkRun
	Done   bool
	Reason string
}

// bulkActionOf returns the run action named by the form's "action".
func bulkActionOf(r *http.Request) (runAction, error) {
	name := docket.Transition(r.PostFormValue("action"))
	if slices.Contains(bulkActions, name) {
		for _, a := range runActions {
			if a.transition == name {
				return a, nil
			}
		}
	}
	return runAction{}, fmt.Errorf("%w: bulk action %q is neither retry nor cancel", errBadInput, name)
}

// bulkConfirm serves POST "/runs/bulk": it resolves the selected runs, or
// the first bulkMax runs matching the posted filter with "all", in the
// runs page's order, and asks to confirm. It changes nothing.
func (h *Handler) bulkConfirm(w http.ResponseWriter, r *http.Request) {
	a, err := bulkActionOf(r)
	if err != nil {
		h.failErr(w, r, "runs_bulk", err)
		return
	}
	v := bulkView{Name: string(a.transition), Label: a.label, BulkMax: bulkMax, BackURL: h.prefix + "/runs"}
	if r.PostFormValue("all") == "1" {
		f, err := runsFilterOf(r.PostForm)
		if err != nil {
			h.failErr(w, r, "runs_bulk", err)
			return
		}
		v.BackURL += "?" + f.values(false).Encode()
		f.Limit = bulkMax
		list, err := h.listRuns(r, f)
		if err != nil {
			h.failErr(w, r, "runs_bulk", err)
			return
		}
		v.Capped = list.Next != nil
		for _, run := range list.Runs {
			v.Keys = append(v.Keys, runKey(run.Scope, run.RunID))
		}
	} else {
		v.Keys = r.PostForm["run"]
	}
	runs, err := bulkRunsOf(v.Keys)
	if err != nil {
		h.failErr(w, r, "runs_bulk", err)
		return
	}
	if len(runs) == 0 {
		h.fail(w, r, "runs_bulk", failure{status: http.StatusBadRequest, class: "invalid",
			message: "No runs selected: tick the runs to " + string(a.transition) + ", or \"all runs matching this filter\". Nothing was changed."})
		return
	}
	v.Listed = runs[:min(len(runs), bulkListed)]
	v.More = len(runs) - len(v.Listed)
	h.render(w, r, http.StatusOK, "bulk", view{Title: fmt.Sprintf("%s %s?", a.label, runCount(len(runs))), Nav: "runs", Data: v})
}

// bulkApply serves POST "/runs/bulk/apply": it applies the confirmed action
// to each run on its own, through the same facade call and check as the
// run page's button, and reports each outcome.
func (h *Handler) bulkApply(w http.ResponseWriter, r *http.Request) {
	a, err := bulkActionOf(r)
	if err != nil {
		h.failErr(w, r, "runs_bulk_apply", err)
		return
	}
	runs, err := bulkRunsOf(r.PostForm["run"])
	if err == nil && len(runs) == 0 {
		err = fmt.Errorf("%w: the confirmation names no runs", errBadInput)
	}
	if err != nil {
		h.failErr(w, r, "runs_bulk_apply", err)
		return
	}
	v := bulkView{Name: string(a.transition), Label: a.label, BackURL: h.prefix + "/runs"}
	for _, run := range runs {
		res := bulkResult{bulkRun: run, Done: true}
		if err := a.apply(r.Context(), h.admin, run.Scope, run.RunID); err != nil {
			f := errorStatus(err)
			h.logRefused(r, "runs_bulk_apply", f)
			res.Done, res.Reason = false, f.message
		}
		if res.Done {
			v.Done++
		} else {
			v.Refused++
		}
		v.Results = append(v.Results, res)
	}
	title := fmt.Sprintf("%s: %d done, %d refused", a.label, v.Done, v.Refused)
	h.render(w, r, http.StatusOK, "bulk", view{Title: title, Nav: "runs", Data: v})
}

// bulkRunsOf parses the posted run keys, refusing more than bulkMax and
// dropping repeats.
func bulkRunsOf(keys []string) ([]bulkRun, error) {
	if len(keys) > bulkMax {
		return nil, fmt.Errorf("%w: %d runs posted, at most %d apply at once", errBadInput, len(keys), bulkMax)
	}
	var runs []bulkRun
	seen := map[string]bool{}
	for _, key := range keys {
		if seen[key] {
			continue
		}
		seen[key] = true
		scope, runID, err := parseRunKey(key)
		if err != nil {
			return nil, err
		}
		runs = append(runs, bulkRun{Scope: scope, RunID: runID})
	}
	return runs, nil
}

// runCount is "1 run" or "n runs".
func runCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
