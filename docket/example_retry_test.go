package docket_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// errInvoiceGone stands for an error that no retry can cure.
var errInvoiceGone = errors.New("invoice deleted")

// sendInvoice stands for the handler's real work.
func sendInvoice(context.Context, json.RawMessage) error { return nil }

// The manual's retry example: a handler error is retried with exponential
// backoff up to five attempts, a permanent one fails the run at once, and
// the run's error history is read back. It compiles with the package; it
// needs a database to run.
func ExampleRetryPolicy() {
	ctx := context.Background()
	var client *docket.Client // opened as in the quick start
	// retry:begin
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: 8,
		Retry: docket.RetryPolicy{
			MaxAttempts: 5,           // the first call and up to 4 retries
			Backoff:     time.Second, // then 2s, 4s, 8s
			MaxBackoff:  time.Minute,
			Multiplier:  2,
			Jitter:      0.2, // each delay up to 20% shorter, at random
		},
		Handler: func(ctx context.Context, job *docket.Job) docket.Result {
			err := sendInvoice(ctx, job.State)
			switch {
			case errors.Is(err, errInvoiceGone):
				return docket.FailNow(err) // no retry can help
			case err != nil:
				return docket.Fail(err) // retried while attempts are left
			}
			return docket.Complete(nil)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	// ... worker.Run(ctx) ...

	run, err := client.FetchRun(ctx, docket.Tenant("acme"), "invoice-42")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.Status, "after", run.Attempt, "attempts")
	for _, e := range run.Errors {
		fmt.Printf("attempt %d at %s (%s): %s\n", e.Attempt, e.At.Format(time.RFC3339), e.Kind, e.Error)
	}
	// retry:end
	_ = worker
}
