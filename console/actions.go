package console

import (
	"context"
	"net/http"

	"github.com/docketrun/docket-go/docket"
)

// runAction is one action of the run page, with the same facade call and
// validation as the CLI's "docket runs" action of that name. Which runs it
// applies to is its transition's rule.
type runAction struct {
	transition docket.Transition
	label      string
	apply      func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error
}

// signal applies transition t, a MutateRun to status, under the run's lock.
func signal(t docket.Transition, status docket.RunStatus) func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
	return func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
		_, err := admin.MutateRun(ctx, scope, runID, func(r docket.Run) (docket.Mutation, error) {
			if err := t.Check(r); err != nil {
				return docket.Mutation{}, err
			}
			return docket.Mutation{Status: status}, nil
		})
		return err
	}
}

var runActions = []runAction{
	{transition: docket.TransitionCancel, label: "Cancel", apply: signal(docket.TransitionCancel, docket.StatusCancelled)},
	{transition: docket.TransitionResume, label: "Resume", apply: signal(docket.TransitionResume, docket.StatusRunning)},
	{
		transition: docket.TransitionRetryPoisoned, label: "Retry poisoned run",
		apply: func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
			_, err := admin.RetryPoisonedRun(ctx, scope, runID)
			return err
		},
	},
	{
		transition: docket.TransitionRetry, label: "Retry",
		apply: func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
			_, err := admin.RetryRun(ctx, scope, runID, docket.RetryRunOptions{})
			return err
		},
	},
}

// actionName names transition t as the run page's button does, for a
// refusal that points to it; "" for a forced retry, which the console does
// not offer.
func actionName(t docket.Transition, force bool) string {
	for _, a := range runActions {
		if a.transition == t && !force {
			return `"` + a.label + `"`
		}
	}
	return ""
}

// runAction serves POST .../{run}/{action}: it applies the action and
// redirects to the run page, or shows the refusal there with its status. A
// cancel needs the confirmation page's "confirm" field; without it the
// browser is sent to that page.
func (h *Handler) runAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	name := docket.Transition(r.PathValue("action"))
	runID := r.PathValue("run")
	if name == docket.TransitionCancel && r.PostFormValue("confirm") != "yes" {
		// A cancel is applied from its confirmation page only; anything
		// else is sent there, having changed nothing.
		http.Redirect(w, r, h.prefix+runPath(scope, runID)+"/cancel", http.StatusSeeOther)
		return
	}
	for _, a := range runActions {
		if a.transition != name {
			continue
		}
		if err := a.apply(r.Context(), h.admin, scope, runID); err != nil {
			f := errorStatus(err)
			if f.status == http.StatusInternalServerError || f.status == http.StatusNotFound || f.status == http.StatusBadRequest {
				h.fail(w, r, "run_action", f)
				return
			}
			h.logRefused(r, "run_action", f)
			h.renderRun(w, r, scope, f.status, view{Error: f.message})
			return
		}
		http.Redirect(w, r, h.prefix+runPath(scope, runID)+"?done="+string(name), http.StatusSeeOther)
		return
	}
	h.fail(w, r, "run_action", failure{status: http.StatusNotFound, class: "not_found", message: "No such run action."})
}

// cancelView is the cancel confirmation page's content.
type cancelView struct {
	Run docket.Run
	// RunURL is the run page, the way back without cancelling; ActionURL is
	// where the confirmation posts.
	RunURL, ActionURL string
}

// cancelPage serves GET .../{run}/cancel: what cancelling the run does and
// a form that does it, so a cancel takes two deliberate clicks without any
// script. A run its status does not let cancel gets the run page with the
// refusal instead.
func (h *Handler) cancelPage(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	if !h.allowWrites {
		h.fail(w, r, "cancel", failure{status: http.StatusForbidden, class: "read_only", message: "This console is read-only: writes are disabled."})
		return
	}
	runID := r.PathValue("run")
	run, err := h.admin.FetchRun(r.Context(), scope, runID)
	if err != nil {
		h.failErr(w, r, "cancel", err)
		return
	}
	if err := docket.TransitionCancel.Check(run); err != nil {
		f := errorStatus(err)
		h.logRefused(r, "cancel", f)
		h.renderRun(w, r, scope, f.status, view{Error: f.message})
		return
	}
	path := h.prefix + runPath(scope, runID)
	h.render(w, r, http.StatusOK, "cancel", view{Title: "Cancel run " + runID + "?", Nav: "runs",
		Data: cancelView{Run: run, RunURL: path, ActionURL: path + "/cancel"}})
}
