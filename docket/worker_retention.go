package docket

import (
	"context"
	"time"
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

// retain runs the cleaner's passes until ctx ends: one at once, then one
// every Retention.Every. It returns at once when the cleaner is off.
func (w *Worker) retain(ctx context.Context) {
	if w.cfg.Retention.Off {
		return
	}
	ticker := time.NewTicker(w.cfg.Retention.Every)
	defer ticker.Stop()
	for {
		w.retentionPass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// retentionPass deletes, for each finished status, the runs that finished
// longer ago than that status is kept. A failure is logged and reported,
// and the next pass tries again; a pass cut short by the worker's stop
// reports nothing.
func (w *Worker) retentionPass(ctx context.Context) {
	start := time.Now()
	var deleted int64
	var err error
	for _, status := range finishedStatuses {
		var n int64
		n, err = w.client.DeleteFinishedRuns(ctx, DeleteFinishedRunsOptions{
			Status:         status,
			FinishedBefore: start.Add(-w.cfg.Retention.keep(status)),
			BatchSize:      w.cfg.Retention.BatchSize,
		})
		deleted += n
		if err != nil {
			break
		}
	}
	if err != nil && ctx.Err() != nil {
		return
	}
	if err != nil {
		w.logger.WarnContext(ctx, "docket worker retention pass failed; trying again at the next pass",
			"deleted", deleted, "error", err.Error())
	} else {
		w.logger.DebugContext(ctx, "docket worker retention pass", "deleted", deleted)
	}
	w.emit(WorkerEvent{Kind: EventRetention, Deleted: deleted, Err: err})
}
