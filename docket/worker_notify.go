package docket

import (
	"context"
	"log/slog"
	"time"

	"github.com/docketrun/docket-go/internal/dbgen"
)

// announceDue wakes the domain's listening workers when any of wakeAts (a
// zero time meaning "now") is due, so they claim at once instead of at their
// next poll. It runs on q: inside a caller's transaction PostgreSQL delivers
// the notification at commit and drops it on rollback.
//
// The notification is a hint, never needed for correctness: workers poll
// anyway. A failure is therefore logged, not returned, because the write it
// follows has already succeeded (or, inside a transaction, the failure aborts
// that transaction and its commit reports it).
func (c *store) announceDue(ctx context.Context, q *dbgen.Queries, wakeAts ...time.Time) {
	now := time.Now()
	for _, at := range wakeAts {
		if at.IsZero() || !at.After(now) {
			if err := q.NotifyRunsDue(ctx); err != nil {
				c.logger.LogAttrs(ctx, slog.LevelWarn, "docket due-run notification failed", slog.String("error", err.Error()))
			}
			return
		}
	}
}

// announceIfDue announces row when the write that returned it left it due
// now: running, unclaimed, healthy, with a wake time that has come (a
// resume, a released claim, a retried poison, a cooperative yield, a past
// ReleaseAt or retry time). On a caller's transaction q delivers it at
// commit.
func (c *store) announceIfDue(ctx context.Context, q *dbgen.Queries, row dbgen.DocketRun) {
	if row.Status == string(StatusRunning) && row.ClaimToken == nil && row.PoisonedAt == nil && row.WakeAt != nil {
		c.announceDue(ctx, q, *row.WakeAt)
	}
}
