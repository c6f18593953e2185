package docket

import (
	"context"
	"time"
)

// WorkerRetention configures a Worker's periodic cleaner of finished runs,
// which calls DeleteFinishedRuns while the worker runs. The zero value
// deletes nothing. The worker's role then needs DELETE on docket_runs, which
// the application grants of docs/grants.sql leave out, and a pass holds one
// more pool connection while it runs. Running the cleaner on one worker of
// a domain is enough; several are safe, since passes skip each other's rows.
type WorkerRetention struct {
	// Every is the pause between passes; zero turns the cleaner off. The
	// first pass runs when the worker starts.
	Every time.Duration
	// Keep is how long finished runs are kept: a pass deletes the runs that
	// finished more than Keep before it started, by the worker's clock. It
	// must be positive when Every is.
	Keep time.Duration
	// BatchSize is DeleteFinishedRunsOptions.BatchSize: 1..MaxRetentionBatch,
	// zero for DefaultRetentionBatch.
	BatchSize int
}

// validate refuses a retention configuration DeleteFinishedRuns or the
// cleaner's timer could not use.
func (r WorkerRetention) validate() error {
	switch {
	case r.Every < 0 || r.Keep < 0:
		return invalidConfig("worker Retention durations must not be negative")
	case r.Every > 0 && r.Keep == 0:
		return invalidConfig("worker Retention.Keep must be positive when Retention.Every is")
	case r.BatchSize < 0 || r.BatchSize > MaxRetentionBatch:
		return invalidConfig("worker Retention.BatchSize %d is outside 1..%d", r.BatchSize, MaxRetentionBatch)
	}
	return nil
}

// retain runs the cleaner's passes until ctx ends: one at once, then one
// every Retention.Every. It returns at once when the cleaner is off.
func (w *Worker) retain(ctx context.Context) {
	every := w.cfg.Retention.Every
	if every == 0 {
		return
	}
	ticker := time.NewTicker(every)
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

// retentionPass deletes the runs finished before now - Keep. A failure is
// logged and reported, and the next pass tries again; a pass cut short by
// the worker's stop reports nothing.
func (w *Worker) retentionPass(ctx context.Context) {
	deleted, err := w.client.DeleteFinishedRuns(ctx, DeleteFinishedRunsOptions{
		FinishedBefore: time.Now().Add(-w.cfg.Retention.Keep),
		BatchSize:      w.cfg.Retention.BatchSize,
	})
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
