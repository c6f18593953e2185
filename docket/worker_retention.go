package docket

import (
	"context"
	"time"

	"github.com/docketrun/docket-go/internal/maintenance"
)

// Defaults of WorkerRetention's zero fields.
const (
	// DefaultRetentionEvery is the pause between a worker's retention passes.
	DefaultRetentionEvery = 5 * time.Minute
	// DefaultKeepDone is how long a done run is kept.
	DefaultKeepDone = 24 * time.Hour
	// DefaultKeepCancelled is how long a cancelled run is kept.
	DefaultKeepCancelled = 24 * time.Hour
	// DefaultKeepFailed is how long a failed run is kept.
	DefaultKeepFailed = 7 * 24 * time.Hour
)

// WorkerRetention configures a Worker's periodic cleaner of finished runs,
// which calls DeleteFinishedRuns for each finished status while the worker
// runs. It is on by default: the zero value deletes done and cancelled runs
// a day after they finished and failed runs after a week; Off keeps
// everything. The worker's role needs DELETE on docket_runs (docs/grants.sql
// grants it), and a pass holds one more pool connection while it runs.
// Several workers of a domain may clean at once: each batch skips the rows
// another one holds, so no run is deleted twice and no pass waits on a lock.
type WorkerRetention struct {
	// Off turns the cleaner off: the worker deletes nothing.
	Off bool
	// Every is the pause between passes; zero means DefaultRetentionEvery.
	// The first pass runs when the worker starts.
	Every time.Duration
	// Done, Cancelled and Failed are how long runs that finished in each
	// status are kept, by the worker's clock: a pass deletes those that
	// finished longer ago. Zero means DefaultKeepDone, DefaultKeepCancelled
	// and DefaultKeepFailed.
	Done, Cancelled, Failed time.Duration
	// BatchSize is DeleteFinishedRunsOptions.BatchSize: 1..MaxRetentionBatch,
	// zero for DefaultRetentionBatch.
	BatchSize int
}

// resolve refuses a retention configuration DeleteFinishedRuns or the
// cleaner's timer could not use and fills in the defaults.
func (r WorkerRetention) resolve() (WorkerRetention, error) {
	switch {
	case r.Every < 0 || r.Done < 0 || r.Cancelled < 0 || r.Failed < 0:
		return r, invalidConfig("worker Retention durations must not be negative")
	case r.BatchSize < 0 || r.BatchSize > MaxRetentionBatch:
		return r, invalidConfig("worker Retention.BatchSize %d is outside 1..%d", r.BatchSize, MaxRetentionBatch)
	}
	for _, d := range []struct {
		value *time.Duration
		def   time.Duration
	}{{&r.Every, DefaultRetentionEvery}, {&r.Done, DefaultKeepDone}, {&r.Cancelled, DefaultKeepCancelled}, {&r.Failed, DefaultKeepFailed}} {
		if *d.value == 0 {
			*d.value = d.def
		}
	}
	return r, nil
}

// keep is how long runs that finished in status are kept.
func (r WorkerRetention) keep(status RunStatus) time.Duration {
	switch status {
	case StatusDone:
		return r.Done
	case StatusCancelled:
		return r.Cancelled
	}
	return r.Failed
}

// retentionCleaner returns the cleaner of w's Retention, deleting through
// w's client and reporting each pass as an EventRetention.
func (w *Worker) retentionCleaner() *maintenance.RetentionCleaner {
	r := w.cfg.Retention
	keep := make([]maintenance.Keep, len(finishedStatuses))
	for i, status := range finishedStatuses {
		keep[i] = maintenance.Keep{Status: string(status), For: r.keep(status)}
	}
	return maintenance.NewRetentionCleaner(maintenance.RetentionConfig{
		Every:     r.Every,
		Keep:      keep,
		BatchSize: r.BatchSize,
		DeleteFinished: func(ctx context.Context, status string, cutoff time.Time, batch int) (int64, error) {
			return w.client.DeleteFinishedRuns(ctx, DeleteFinishedRunsOptions{
				Status:         RunStatus(status),
				FinishedBefore: cutoff,
				BatchSize:      batch,
			})
		},
		Logger: w.logger,
		OnPass: func(deleted int64, err error) {
			w.emit(WorkerEvent{Kind: EventRetention, Deleted: deleted, Err: err})
		},
	})
}
