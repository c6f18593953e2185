package docket

import (
	"context"
	"errors"
	"log/slog"
)

// debug logs msg at debug level with the run id, the only place the worker
// logs an identity.
func (w *Worker) debug(ctx context.Context, msg, runID string, attrs ...any) {
	if !w.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	w.logger.DebugContext(ctx, msg, append([]any{"run_id", runID}, attrs...)...)
}

// failure logs a failed call about one run: at warn level with an
// identity-free reason, at debug level with the run id and the error, whose
// text may name the run.
func (w *Worker) failure(ctx context.Context, msg, runID string, err error) {
	w.logger.WarnContext(ctx, msg, "reason", errorReason(err))
	w.debug(ctx, msg, runID, "error", err.Error())
}

// errorReason classifies err into a bounded, identity-free reason.
func errorReason(err error) string {
	switch {
	case errors.Is(err, ErrStaleFence):
		return "stale_fence"
	case errors.Is(err, ErrClaimLost):
		return "claim_lost"
	case errors.Is(err, ErrNotFound):
		return "not_found"
	case errors.Is(err, ErrInvalidArgument):
		return "invalid_argument"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "database"
}
