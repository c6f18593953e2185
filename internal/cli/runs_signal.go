package cli

import (
	"context"
	"fmt"

	"github.com/docketrun/docket-go/docket"
)

func runsCancel(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	// Cancelling a finished run is a refused transition, which MutateRun
	// reports as ErrInvalidTransition, rather than a silent no-op.
	res, err := admin.MutateRun(ctx, a.scope, a.runID, func(docket.Run) (docket.Mutation, error) {
		return docket.Mutation{Status: docket.StatusCancelled}, nil
	})
	if err != nil {
		return err
	}
	printRunSummary(out, res.Run)
	return nil
}

func runsResume(ctx context.Context, admin *docket.Admin, a runsArgs, out output) error {
	res, err := admin.MutateRun(ctx, a.scope, a.runID, func(r docket.Run) (docket.Mutation, error) {
		if r.Status != docket.StatusWaiting {
			return docket.Mutation{}, fmt.Errorf("%w: run %q is %s, not waiting", docket.ErrInvalidTransition, r.RunID, r.Status)
		}
		return docket.Mutation{Status: docket.StatusRunning}, nil
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
