package main

import (
	"context"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectWithNotices opens a connection to database whose notices are
// appended to out.
func connectWithNotices(ctx context.Context, c *cluster, database string, out *strings.Builder) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(c.srv.URL(database))
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(n.Message)
		out.WriteString("\n\n")
	}
	return pgx.ConnectConfig(ctx, cfg)
}
