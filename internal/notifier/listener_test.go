package notifier

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// fakeConn is a scripted connection: each WaitForNotification takes the
// next value of notes (nil is a notification) or ends with its context.
type fakeConn struct {
	execs   chan string
	execErr error
	notes   chan error
	gone    atomic.Bool
	closed  chan struct{}
}

func newFakeConn() *fakeConn {
	return &fakeConn{execs: make(chan string, 4), notes: make(chan error), closed: make(chan struct{})}
}

func (f *fakeConn) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	f.execs <- sql
	return pgconn.CommandTag{}, f.execErr
}

func (f *fakeConn) WaitForNotification(ctx context.Context) (*pgconn.Notification, error) {
	select {
	case err := <-f.notes:
		if err != nil {
			return nil, err
		}
		return &pgconn.Notification{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeConn) IsClosed() bool { return f.gone.Load() }

func (f *fakeConn) Close(context.Context) error {
	close(f.closed)
	return nil
}

// dial is one scripted answer of Connect.
type dial struct {
	conn *fakeConn
	err  error
}

// harness runs a Listener over scripted dials and a manual clock.
type harness struct {
	dials    chan dial
	backoffs chan time.Duration
	fire     chan time.Time
	listens  chan struct{}
	errs     chan error
	wake     chan struct{}
	done     chan struct{}
	cancel   context.CancelFunc
}

func start(t *testing.T) *harness {
	t.Helper()
	h := &harness{
		dials:    make(chan dial),
		backoffs: make(chan time.Duration, 1),
		fire:     make(chan time.Time),
		listens:  make(chan struct{}, 4),
		errs:     make(chan error, 4),
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	l := &Listener{
		Connect: func(ctx context.Context) (Conn, string, error) {
			select {
			case d := <-h.dials:
				if d.err != nil {
					return nil, "", d.err
				}
				return d.conn, `due "runs"`, nil
			case <-ctx.Done():
				return nil, "", ctx.Err()
			}
		},
		Wakes:     []chan<- struct{}{h.wake},
		WaitBound: time.Hour,
		Backoff:   func(failures int) time.Duration { return time.Duration(failures) * time.Second },
		After: func(d time.Duration) <-chan time.Time {
			h.backoffs <- d
			return h.fire
		},
		OnListen: func() { h.listens <- struct{}{} },
		OnError:  func(err error, _ time.Duration) { h.errs <- err },
	}
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	go func() {
		defer close(h.done)
		l.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-h.done
	})
	return h
}

// connect hands the listener conn and waits until its LISTEN took effect.
func (h *harness) connect(t *testing.T, conn *fakeConn) {
	t.Helper()
	h.dials <- dial{conn: conn}
	if got, want := <-conn.execs, `listen "due ""runs"""`; got != want {
		t.Fatalf("exec %q, want %q", got, want)
	}
	<-h.listens
}

// expectWake fails unless a wake-up is pending.
func (h *harness) expectWake(t *testing.T) {
	t.Helper()
	select {
	case <-h.wake:
	default:
		t.Fatal("no wake-up pending")
	}
}

// A session wakes once right after LISTEN and once per notification, and
// never blocks on a wake-up already pending.
func TestWakesAfterListenAndOnNotifications(t *testing.T) {
	h := start(t)
	conn := newFakeConn()
	h.connect(t, conn)
	h.expectWake(t)
	conn.notes <- nil
	// The listener took the next note only after waking for the first.
	conn.notes <- nil
	h.expectWake(t)
	// Taking each further note proves the listener did not block on the
	// wake-up still pending.
	conn.notes <- nil
	conn.notes <- nil
	conn.notes <- nil
	h.expectWake(t)
}

// Failed sessions back off longer each time; one whose LISTEN took effect
// resets the count, and its connection is closed.
func TestReconnectsWithBackoffAfterErrors(t *testing.T) {
	h := start(t)
	refused := errors.New("connection refused")
	h.dials <- dial{err: refused}
	if err := <-h.errs; !errors.Is(err, refused) || !strings.HasPrefix(err.Error(), "listener connect: ") {
		t.Fatalf("error %v", err)
	}
	if d := <-h.backoffs; d != time.Second {
		t.Fatalf("first backoff %v", d)
	}
	h.fire <- time.Time{}

	noListen := newFakeConn()
	noListen.execErr = errors.New("permission denied")
	h.dials <- dial{conn: noListen}
	<-noListen.execs
	if err := <-h.errs; !errors.Is(err, noListen.execErr) || !strings.HasPrefix(err.Error(), "listen: ") {
		t.Fatalf("error %v", err)
	}
	<-noListen.closed
	if d := <-h.backoffs; d != 2*time.Second {
		t.Fatalf("second backoff %v", d)
	}
	h.fire <- time.Time{}

	conn := newFakeConn()
	h.connect(t, conn)
	reset := errors.New("connection reset")
	conn.notes <- reset
	if err := <-h.errs; !errors.Is(err, reset) || !strings.HasPrefix(err.Error(), "listener wait: ") {
		t.Fatalf("error %v", err)
	}
	<-conn.closed
	if d := <-h.backoffs; d != time.Second {
		t.Fatalf("backoff after a listened session %v", d)
	}
	h.fire <- time.Time{}
	h.connect(t, newFakeConn())
}

// A wait that hit the bound keeps the session while the connection is
// open, and ends it once the connection is closed.
func TestBoundedWaitEndsOnlyADeadSession(t *testing.T) {
	h := start(t)
	conn := newFakeConn()
	h.connect(t, conn)
	conn.notes <- context.DeadlineExceeded
	conn.notes <- nil // still the same session
	conn.gone.Store(true)
	conn.notes <- context.DeadlineExceeded
	if err := <-h.errs; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v", err)
	}
	<-conn.closed
	<-h.backoffs
}

// Ending the context stops a listening session without an error and closes
// its connection.
func TestStopWhileListening(t *testing.T) {
	h := start(t)
	conn := newFakeConn()
	h.connect(t, conn)
	h.cancel()
	<-h.done
	<-conn.closed
	if len(h.errs) != 0 {
		t.Fatalf("stop reported %v", <-h.errs)
	}
}

// Ending the context stops a listener waiting out a backoff.
func TestStopDuringBackoff(t *testing.T) {
	h := start(t)
	h.dials <- dial{err: errors.New("refused")}
	<-h.backoffs
	h.cancel()
	<-h.done
}
