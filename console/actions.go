package console

import (
	"context"
	"fmt"
	"net/http"

	"github.com/docketrun/docket-go/docket"
)

// runAction is one action of the run page, with the same facade call and
// validation as the CLI's "docket runs" action of that name.
type runAction struct {
	name    string
	label   string
	allowed func(docket.Run) bool
	apply   func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error
}

// unfinished reports a running or waiting run.
func unfinished(r docket.Run) bool {
	return r.Status == docket.StatusRunning || r.Status == docket.StatusWaiting
}

var runActions = []runAction{
	{
		name: "cancel", label: "Cancel", allowed: unfinished,
		apply: func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
			_, err := admin.MutateRun(ctx, scope, runID, func(docket.Run) (docket.Mutation, error) {
				return docket.Mutation{Status: docket.StatusCancelled}, nil
			})
			return err
		},
	},
	{
		name: "resume", label: "Resume", allowed: func(r docket.Run) bool { return r.Status == docket.StatusWaiting },
		apply: func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
			_, err := admin.MutateRun(ctx, scope, runID, func(r docket.Run) (docket.Mutation, error) {
				if r.Status != docket.StatusWaiting {
					return docket.Mutation{}, fmt.Errorf("%w: the run is %s, not waiting", docket.ErrInvalidTransition, r.Status)
				}
				return docket.Mutation{Status: docket.StatusRunning}, nil
			})
			return err
		},
	},
	{
		name: "retry-poisoned", label: "Retry poisoned run", allowed: func(r docket.Run) bool { return r.PoisonedAt != nil },
		apply: func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
			_, err := admin.RetryPoisonedRun(ctx, scope, runID)
			return err
		},
	},
	{
		name: "retry", label: "Retry", allowed: func(r docket.Run) bool {
			return r.Status == docket.StatusFailed || r.Status == docket.StatusCancelled
		},
		apply: func(ctx context.Context, admin *docket.Admin, scope docket.Scope, runID string) error {
			_, err := admin.RetryRun(ctx, scope, runID, docket.RetryRunOptions{})
			return err
		},
	},
}

// runAction serves POST .../{run}/{action}: it applies the action and
// redirects to the run page, or shows the refusal there with its status.
func (h *Handler) runAction(w http.ResponseWriter, r *http.Request, scope docket.Scope) {
	name := r.PathValue("action")
	runID := r.PathValue("run")
	for _, a := range runActions {
		if a.name != name {
			continue
		}
		if err := a.apply(r.Context(), h.admin, scope, runID); err != nil {
			status, class, message := errorStatus(err)
			if status == http.StatusInternalServerError || status == http.StatusNotFound || status == http.StatusBadRequest {
				h.failErr(w, r, "run_action", err)
				return
			}
			h.logger.WarnContext(r.Context(), "console: request refused", "route", "run_action", "status", status, "class", class)
			h.renderRun(w, r, scope, status, view{Error: message})
			return
		}
		http.Redirect(w, r, h.prefix+runPath(scope, runID)+"?done="+name, http.StatusSeeOther)
		return
	}
	h.fail(w, r, "run_action", http.StatusNotFound, "not_found", "No such run action.")
}
