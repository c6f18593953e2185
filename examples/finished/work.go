package finished

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketrun/docket-go/docket"
)

// workOff runs a Worker with handler on client until a verdict on each of
// runIDs is written, then stops it gracefully. It waits on the Worker's own
// verdict events.
func workOff(ctx context.Context, client *docket.Client, handler docket.Handler, runIDs ...string) error {
	awaited := map[string]bool{}
	for _, runID := range runIDs {
		awaited[runID] = true
	}
	verdicts := make(chan docket.WorkerEvent, len(runIDs))
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: len(runIDs),
		Handler:     handler,
		// The example prunes by hand (retain); Workers retain by default.
		Retention: docket.WorkerRetention{Off: true},
		// A failed attempt fails the run at once; Workers retry by default.
		Retry: docket.RetryPolicy{MaxAttempts: 1},
		OnEvent: func(e docket.WorkerEvent) {
			if e.Kind == docket.EventVerdict && awaited[e.RunID] {
				select {
				case verdicts <- e: // one verdict per awaited run fits
				default:
				}
			}
		},
	})
	if err != nil {
		return fmt.Errorf("finished: worker: %w", err)
	}
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(ctx) }()
	var failed []error
	for range runIDs {
		select {
		case e := <-verdicts:
			if e.Outcome != docket.VerdictWritten {
				failed = append(failed, fmt.Errorf("finished: the verdict on %s was not written: %w", e.RunID, e.Err))
			}
		case err := <-ran:
			return fmt.Errorf("finished: the worker stopped before %v were worked off: %w", runIDs, errors.Join(err, ctx.Err()))
		}
	}
	if err := worker.Stop(ctx); err != nil {
		failed = append(failed, fmt.Errorf("finished: stop the worker: %w", err))
	}
	return errors.Join(failed...)
}
