package traces

import (
	"context"
	"errors"
	"fmt"

	"github.com/docketrun/docket-go/docket"
)

// workOff runs a Worker on client until the verdict on runID is written,
// then stops it gracefully. It waits on the Worker's own verdict event.
func workOff(ctx context.Context, client *docket.Client, runID string) error {
	verdicts := make(chan docket.WorkerEvent, 1)
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: 1,
		Handler: func(context.Context, *docket.Job) docket.Result {
			return docket.Complete(nil)
		},
		OnEvent: func(e docket.WorkerEvent) {
			if e.Kind == docket.EventVerdict && e.RunID == runID {
				select {
				case verdicts <- e: // the first is the one awaited
				default:
				}
			}
		},
	})
	if err != nil {
		return fmt.Errorf("traces: worker: %w", err)
	}
	ran := make(chan error, 1)
	go func() { ran <- worker.Run(ctx) }()
	select {
	case e := <-verdicts:
		if err := worker.Stop(ctx); err != nil {
			return fmt.Errorf("traces: stop the worker: %w", err)
		}
		if e.Outcome != docket.VerdictWritten {
			return fmt.Errorf("traces: the verdict on %s was not written: %w", runID, e.Err)
		}
		return nil
	case err := <-ran:
		return fmt.Errorf("traces: the worker stopped before %s was worked off: %w", runID, errors.Join(err, ctx.Err()))
	}
}
