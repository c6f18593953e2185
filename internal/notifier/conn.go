package notifier

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
)

// Conn is the part of a dedicated connection a listener uses; *pgx.Conn
// implements it.
type Conn interface {
	// Exec runs sql; the listener sends LISTEN through it.
	Exec(ctx context.Context, sql string, arguments ...any) (pgconn.CommandTag, error)
	// WaitForNotification blocks until a notification arrives or ctx ends.
	WaitForNotification(ctx context.Context) (*pgconn.Notification, error)
	// IsClosed reports whether the connection is gone.
	IsClosed() bool
	// Close ends the connection.
	Close(ctx context.Context) error
}

// Connect opens a connection of the listener's own and names the channel
// to listen on. The listener closes the connection when its session ends;
// on an error, Connect closes what it opened.
type Connect func(ctx context.Context) (conn Conn, channel string, err error)
