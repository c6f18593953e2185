package notifier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// closeTimeout bounds the close of a finished session's connection.
const closeTimeout = time.Second

// Listener keeps one LISTEN session at a time and wakes its channels for
// every notification. Its fields configure it, Connect and Backoff being
// required; Run uses it.
type Listener struct {
	// Connect opens each session's connection.
	Connect Connect
	// Wakes each receive a value, unless one is pending, for every
	// notification and right after each LISTEN: anything announced before
	// a session started was not delivered to it.
	Wakes []chan<- struct{}
	// WaitBound bounds each wait for a notification, so a silently dead
	// session is noticed at the next wait instead of never.
	WaitBound time.Duration
	// Backoff is the wait before reconnecting after the given number of
	// consecutive failed sessions (>= 1); a session whose LISTEN took
	// effect resets the count.
	Backoff func(failures int) time.Duration
	// After returns a channel that receives once d passed; nil is the
	// system clock's time.After.
	After func(d time.Duration) <-chan time.Time
	// OnListen, when set, hears of each LISTEN that took effect, after the
	// wake-up that follows it was signalled.
	OnListen func()
	// OnError, when set, hears why a session ended and how long the
	// listener waits before the next one.
	OnError func(err error, retryIn time.Duration)
	// OnPayload, when set, receives the payload of each notification that
	// has one, before the wake channels are signalled.
	OnPayload func(payload string)
}

// Run listens until ctx ends.
func (l *Listener) Run(ctx context.Context) {
	after := l.After
	if after == nil {
		after = time.After
	}
	failures := 0
	for {
		listened, err := l.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			failures = 0
		}
		failures++
		backoff := l.Backoff(failures)
		if l.OnError != nil {
			l.OnError(err, backoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-after(backoff):
		}
	}
}

// session runs one LISTEN session. It reports whether LISTEN took effect,
// and why the session ended.
func (l *Listener) session(ctx context.Context) (bool, error) {
	conn, channel, err := l.Connect(ctx)
	if err != nil {
		return false, fmt.Errorf("listener connect: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
		defer cancel()
		_ = conn.Close(closeCtx) // the session is over either way
	}()
	if _, err := conn.Exec(ctx, "listen "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return false, fmt.Errorf("listen: %w", err)
	}
	l.wake()
	if l.OnListen != nil {
		l.OnListen()
	}
	for {
		waitCtx, cancel := context.WithTimeout(ctx, l.WaitBound)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			if n.Payload != "" && l.OnPayload != nil {
				l.OnPayload(n.Payload)
			}
			l.wake()
		case ctx.Err() != nil:
			return true, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
		default:
			return true, fmt.Errorf("listener wait: %w", err)
		}
	}
}

// wake signals each wake channel unless a value is already pending there.
func (l *Listener) wake() {
	for _, w := range l.Wakes {
		select {
		case w <- struct{}{}:
		default:
		}
	}
}
