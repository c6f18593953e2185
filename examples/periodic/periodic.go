// Package periodic is the manual's periodic-runs example as a program that
// runs: a schedule inserts a nightly report run for a tenant and a Worker
// takes the schedule's ticks and works the runs off. The block between the
// periodic markers is the manual's code, byte for byte; a test keeps the two
// equal and runs Run on a fresh database.
package periodic

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/docketrun/docket-go/docket"
)

// Run adds the nightly schedule (a no-op when it exists) and runs a Worker
// that takes its ticks and runs report for each tick's run; once report has
// run once, Run stops the Worker gracefully and returns.
func Run(ctx context.Context, client *docket.Client, report func(context.Context, *docket.Job) error) error {
	ctx, reported := context.WithCancel(ctx)
	defer reported()
	once := func(ctx context.Context, job *docket.Job) error {
		defer reported() // one report is the whole example
		return report(ctx, job)
	}
	return periodic(ctx, client, once)
}

func periodic(ctx context.Context, client *docket.Client, sendReport func(context.Context, *docket.Job) error) error {
	// periodic:begin
	// acme's report every night at 02:30 Berlin time. Adding it at every
	// start is safe: the name is unique in its scope.
	_, err := client.AddSchedule(ctx, docket.NewSchedule{
		Scope:     docket.Tenant("acme"),
		Name:      "nightly-report",
		GraphID:   "send-report",
		GraphHash: "v1",
		State:     json.RawMessage(`{"report": "nightly"}`),
		Cron:      "30 2 * * *",
		TimeZone:  "Europe/Berlin",
	})
	if err != nil && !errors.Is(err, docket.ErrDuplicateSchedule) {
		return err
	}

	// Any number of Workers may take ticks: each tick inserts one run,
	// "schedule:acme/nightly-report@<tick in UTC>", through admission.
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: 4,
		Schedules:   true,
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			if err := sendReport(ctx, job); err != nil {
				return docket.Fail(err)
			}
			return docket.Complete(nil)
		},
	})
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		_ = worker.Stop(context.WithoutCancel(ctx))
	}()
	return worker.Run(context.WithoutCancel(ctx))
	// periodic:end
}
