// Package finished is the manual's examples on finished runs as a program
// that runs: a run that failed is sent back with RetryRun and worked off
// again, and DeleteFinishedRuns deletes the runs finished more than 30 days
// ago. The blocks between the retry markers and between the retention
// markers are the manual's code, byte for byte; a test keeps them equal and
// runs Work and Later on a fresh database, moving the finished runs 40
// days into the past in between.
package finished

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// errMailServerDown is the failure of a send while the mail server is down.
var errMailServerDown = errors.New("mail server down")

// Work inserts invoice-1 and invoice-2 of acme and works them off with a
// Worker while the mail server is down for invoice-2: invoice-1 is done,
// invoice-2 failed with its error kept. It returns once both verdicts are
// written.
func Work(ctx context.Context, client *docket.Client) error {
	for _, runID := range []string{"invoice-1", "invoice-2"} {
		if _, err := client.InsertRun(ctx, docket.NewRun{
			RunID: runID, Scope: docket.Tenant("acme"), GraphID: "send-invoice", GraphHash: "v1",
			State: json.RawMessage(`{}`),
		}); err != nil {
			return fmt.Errorf("finished: insert %s: %w", runID, err)
		}
	}
	return workOff(ctx, client, func(_ context.Context, job *docket.Job) docket.Result {
		if job.RunID == "invoice-2" {
			return docket.Fail(errMailServerDown)
		}
		return docket.Complete(nil)
	}, "invoice-1", "invoice-2")
}

// Later is the app once the mail server is back: it retries invoice-2,
// works it off, then deletes the runs finished more than 30 days ago, and
// prints to out what each step did.
func Later(ctx context.Context, client *docket.Client, out io.Writer) error {
	if err := retry(ctx, client, out); err != nil {
		return fmt.Errorf("finished: retry: %w", err)
	}
	complete := func(context.Context, *docket.Job) docket.Result { return docket.Complete(nil) }
	if err := workOff(ctx, client, complete, "invoice-2"); err != nil {
		return err
	}
	run, err := client.FetchRun(ctx, docket.Tenant("acme"), "invoice-2")
	if err != nil {
		return fmt.Errorf("finished: fetch invoice-2: %w", err)
	}
	fmt.Fprintf(out, "%s is %s, attempt counter %d, %d history entries kept\n", run.RunID, run.Status, run.Attempt, len(run.Errors))
	if err := retain(ctx, client, out); err != nil {
		return fmt.Errorf("finished: retention: %w", err)
	}
	return nil
}

// retry is the manual's RetryRun block.
func retry(ctx context.Context, client *docket.Client, out io.Writer) error {
	// retry:begin
	// invoice-2 failed while the mail server was down. It is back up: send the
	// invoice again (a done run would need Force).
	run, err := client.RetryRun(ctx, docket.Tenant("acme"), "invoice-2", docket.RetryRunOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s is %s again, attempt counter %d\n", run.RunID, run.Status, run.Attempt)
	for _, e := range run.Errors { // why it failed, and this retry
		fmt.Fprintf(out, "  kept: attempt %d (%s): %s\n", e.Attempt, e.Kind, e.Error)
	}
	// retry:end
	return nil
}

// retain is the manual's DeleteFinishedRuns block.
func retain(ctx context.Context, client *docket.Client, out io.Writer) error {
	// retention:begin
	// Keep finished runs for 30 days, by hand (a nightly job), where Workers
	// run with Retention.Off; by default each Worker deletes done and
	// cancelled runs after a day and failed runs after a week.
	deleted, err := client.DeleteFinishedRuns(ctx, docket.DeleteFinishedRunsOptions{
		FinishedBefore: time.Now().AddDate(0, 0, -30),
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "deleted %d runs finished more than 30 days ago\n", deleted)
	// retention:end
	return nil
}
