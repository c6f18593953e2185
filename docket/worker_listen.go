package docket

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/gen"
)

// listen keeps a LISTEN session on the domain's due-run channel and signals
// every channel of wakes for every notification, reconnecting with backoff after any error,
// until ctx ends.
func (w *Worker) listen(ctx context.Context, wakes ...chan<- struct{}) {
	failures := 0
	for {
		listened, err := w.listenOnce(ctx, wakes)
		if ctx.Err() != nil {
			return
		}
		if listened {
			failures = 0
		}
		failures++
		backoff := errorBackoff(failures)
		w.logger.WarnContext(ctx, "docket worker listener failed; reconnecting", "error", err.Error(), "retry_in", backoff)
		if !sleep(ctx, backoff) {
			return
		}
	}
}

// listenOnce runs one LISTEN session on a connection taken out of the pool
// for good. It reports whether LISTEN took effect, and why the session
// ended. Right after LISTEN it signals wakes once, since anything that became
// due before the session started was not announced to it.
func (w *Worker) listenOnce(ctx context.Context, wakes []chan<- struct{}) (bool, error) {
	pooled, err := w.client.pool.Acquire(ctx)
	if err != nil {
		return false, fmt.Errorf("docket: worker listener connect: %w", err)
	}
	conn := pooled.Hijack()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx) // the session is over either way
	}()
	channel, err := gen.New(w.client.scopedOn(conn, false)).RunsDueChannel(ctx)
	if err != nil {
		return false, fmt.Errorf("docket: worker listener channel: %w", err)
	}
	if _, err := conn.Exec(ctx, "listen "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("docket: worker listen: %w", err)
	}
	w.logger.DebugContext(ctx, "docket worker listening for due runs")
	w.emit(WorkerEvent{Kind: EventListening})
	signalAll(wakes)
	for {
		// The poll interval bounds each wait, so a silently dead session is
		// noticed on the next wait instead of never.
		waitCtx, cancel := context.WithTimeout(ctx, w.cfg.PollInterval)
		_, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			signalAll(wakes)
		case ctx.Err() != nil:
			return true, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
		default:
			return true, fmt.Errorf("docket: worker listener wait: %w", err)
		}
	}
}

// signalAll signals each of wakes.
func signalAll(wakes []chan<- struct{}) {
	for _, wake := range wakes {
		signal(wake)
	}
}

// signal wakes the poll loop unless a wake-up is already pending.
func signal(wake chan<- struct{}) {
	select {
	case wake <- struct{}{}:
	default:
	}
}
