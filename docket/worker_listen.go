package docket

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/docketrun/docket-go/internal/dbgen"
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
		OnPayload: func(payload string) { w.revoked(ctx, payload) },
	}
	l.Run(ctx)
}

// revoked ends the handler of the job whose claim a NotifyClaimRevoked
// payload ("revoked TOKEN STATUS") names, if this worker holds it: with a
// cause matching ErrRunCancelled when the run was cancelled, else
// ErrClaimLost. Any other payload is not for it.
func (w *Worker) revoked(ctx context.Context, payload string) {
	fields := strings.Fields(payload)
	if len(fields) != 3 || fields[0] != "revoked" {
		return
	}
	token, err := uuid.Parse(fields[1])
	if err != nil {
		return
	}
	for _, j := range w.inFlight() {
		if j.holder.Token != token {
			continue
		}
		w.debug(ctx, "docket worker claim revoked; cancelling its handler", j.RunID, "status", fields[2])
		j.cancelHandler(revocationCause(RunStatus(fields[2])))
	}
}

// revocationCause is the cause a handler's context ends with when an
// operator's write revoked its claim and left the run in status.
func revocationCause(status RunStatus) error {
	if status == StatusCancelled {
		return fmt.Errorf("%w by an operator", ErrRunCancelled)
	}
	return fmt.Errorf("%w: an operator's write made the run %s", ErrClaimLost, status)
}

// listenConn takes a connection out of the pool for good and reads the
// domain's due-run channel on it.
func (w *Worker) listenConn(ctx context.Context) (notifier.Conn, string, error) {
	pooled, err := w.client.pool.Acquire(ctx)
	if err != nil {
		return nil, "", err
	}
	conn := pooled.Hijack()
	channel, err := dbgen.New(w.client.scopedOn(conn, false)).RunsDueChannel(ctx)
	if err != nil {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listenCloseTimeout)
		defer cancel()
		_ = conn.Close(closeCtx) // the session never started
		return nil, "", fmt.Errorf("reading the due-run channel: %w", err)
	}
	return conn, channel, nil
}
