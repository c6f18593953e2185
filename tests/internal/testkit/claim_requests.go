package testkit

import (
	"context"
	"log/slog"
)

// RequestFiled is a slog handler that signals, without blocking, each claim
// request a client logging to it files (the facade's debug log "docket
// claim request filed"): a combined claim that found another call
// combining is about to wait. Make it with a buffer of one.
type RequestFiled chan struct{}

// Enabled implements slog.Handler: every level, since the signal is a debug log.
func (RequestFiled) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (f RequestFiled) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "docket claim request filed" {
		select {
		case f <- struct{}{}:
		default:
		}
	}
	return nil
}

// WithAttrs implements slog.Handler.
func (f RequestFiled) WithAttrs([]slog.Attr) slog.Handler { return f }

// WithGroup implements slog.Handler.
func (f RequestFiled) WithGroup(string) slog.Handler { return f }
