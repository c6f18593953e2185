package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/internal/notifier"
)

// listenCloseTimeout bounds the close of a listener connection whose
// channel could not be read.
const listenCloseTimeout = time.Second

// listen keeps a LISTEN session on the domain's due-run channel on a
// connection of its own and signals every channel of wakes for every
// notification, reconnecting with backoff after any error, until ctx ends
// (see package notifier).
func (w *Worker) listen(ctx context.Context, wakes ...chan<- struct{}) {
	l := &notifier.Listener{
		Connect:   w.listenConn,
		Wakes:     wakes,
		WaitBound: w.cfg.PollInterval,
		Backoff:   errorBackoff,
		OnListen: func() {
			w.logger.DebugContext(ctx, "docket worker listening for due runs")
			w.emit(WorkerEvent{Kind: EventListening})
		},
		OnError: func(err error, retryIn time.Duration) {
			w.logger.WarnContext(ctx, "docket worker listener failed; reconnecting",
				"error", fmt.Errorf("docket: worker %w", err).Error(), "retry_in", retryIn)
		},
	}
	l.Run(ctx)
}

// listenConn takes a connection out of the pool for good and reads the
// domain's due-run channel on it.
func (w *Worker) listenConn(ctx context.Context) (notifier.Conn, string, error) {
	pooled, err := w.client.pool.Acquire(ctx)
	if err != nil {
		return nil, "", err
	}
	conn := pooled.Hijack()
	channel, err := gen.New(w.client.scopedOn(conn, false)).RunsDueChannel(ctx)
	if err != nil {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseTimeout)
		defer cancel()
		_ = conn.Close(closeCtx) // the session never started
		return nil, "", fmt.Errorf("reading the due-run channel: %w", err)
	}
	return conn, channel, nil
}
