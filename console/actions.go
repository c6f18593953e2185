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
// redirects to the run page, or shows the refusal there with its status.
func (h *Handler) runAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	name := docket.Transition(r.PathValue("action"))
	runID := r.PathValue("run")
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
