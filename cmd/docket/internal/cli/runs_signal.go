package cli

import (
	"context"
	"errors"

	"github.com/docketrun/docket-go/docket"
)

func runsCancel(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	return runsSignal(ctx, admin, a, out, docket.TransitionCancel, docket.StatusCancelled)
}

func runsResume(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	return runsSignal(ctx, admin, a, out, docket.TransitionResume, docket.StatusRunning)
}

// runsSignal applies transition t, a MutateRun to status, under the run's
// lock: a run t does not apply to is refused with a *TransitionError.
func runsSignal(ctx context.Context, admin *docket.Admin, a runsArgs, out output, t docket.Transition, status docket.RunStatus) error {
	res, err := admin.MutateRun(ctx, a.scope, a.runID, func(r docket.Run) (docket.Mutation, error) {
		if err := t.Check(r); err != nil {
			return docket.Mutation{}, err
		}
		return docket.Mutation{Status: status}, nil
	})
	if err != nil {
		return err
	}
	printRunSummary(out, res.Run)
	return nil
}

func runsRetryPoisoned(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	r, err := admin.RetryPoisonedRun(ctx, a.scope, a.runID)
	if err != nil {
		return err
	}
	printRunSummary(out, r)
	return nil
}

// cliTransitionError is a refused transition phrased with the docket
// commands that apply the transitions; it still matches
// ErrInvalidTransition.
type cliTransitionError struct {
	*docket.TransitionError
}

func (e cliTransitionError) Error() string {
	return e.Explain(func(t docket.Transition, force bool) string {
		if force {
			return "docket runs " + string(t) + " --force"
		}
		return "docket runs " + string(t)
	})
}

func (e cliTransitionError) Unwrap() error { return e.TransitionError }

// inCLITerms replaces a refused transition, wherever it is in err's chain,
// by its CLI phrasing; other errors pass as they are.
func inCLITerms(err error) error {
	var te *docket.TransitionError
	if errors.As(err, &te) {
		return cliTransitionError{te}
	}
	return err
}
