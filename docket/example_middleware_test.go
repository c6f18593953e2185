package docket_test

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"time"

	"github.com/docketrun/docket-go/docket"
)

// errCardDeclined stands for an error that a retry cannot cure.
var errCardDeclined = errors.New("card declined")

// The manual's middleware example: a Worker-wide middleware logs every
// attempt's verdict and duration, and a graph's middleware turns a known
// permanent error into FailNow. It compiles with the package; it needs a
// database to run.
func ExampleMiddleware() {
	var client *docket.Client // opened as in the quick start
	var charge docket.TypedHandler[struct{ Card string }]
	// middleware:begin
	logAttempts := func(next docket.Handler) docket.Handler {
		return func(ctx context.Context, job *docket.Job) docket.Result {
			started := time.Now()
			result := next(ctx, job)
			slog.InfoContext(ctx, "attempt", "graph", job.GraphID, "attempt", job.Attempt,
				"verdict", result.Kind(), "took", time.Since(started))
			return result
		}
	}
	permanent := func(next docket.Handler) docket.Handler {
		return func(ctx context.Context, job *docket.Job) docket.Result {
			result := next(ctx, job)
			if result.Kind() == "fail" && errors.Is(result.Err(), errCardDeclined) {
				return docket.FailNow(result.Err()) // no retry can help
			}
			return result
		}
	}
	handlers := docket.NewHandlers()
	if err := docket.Register(handlers, "charge", charge, docket.HandlerMiddleware(permanent)); err != nil {
		log.Fatal(err)
	}
	worker, err := docket.NewWorker(client, docket.WorkerConfig{
		Concurrency: 8,
		Handlers:    handlers,
		Middleware:  []docket.Middleware{logAttempts}, // outermost: sees permanent's verdict
	})
	// middleware:end
	_, _ = worker, err
}
