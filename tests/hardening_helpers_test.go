package tests

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/internal/testkit"
)

// hardQueryCounter is a pgx tracer that counts the statements a pool sends,
// so a test can prove that refused input never reached the server.
type hardQueryCounter struct{ n atomic.Int64 }

// TraceQueryStart counts one statement.
func (c *hardQueryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (c *hardQueryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// hardTerminate ends the backend pid with pg_terminate_backend.
func hardTerminate(t testing.TB, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(testkit.Context(t), `select pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
}

// hardWaitsOnLock reports whether backend pid is blocked on a heavyweight
// lock right now.
func hardWaitsOnLock(t testing.TB, pool *pgxpool.Pool, pid uint32) bool {
	t.Helper()
	var waiting bool
	err := pool.QueryRow(testkit.Context(t),
		`select coalesce(bool_or(wait_event_type = 'Lock'), false) from pg_stat_activity where pid = $1`, pid).Scan(&waiting)
	if err != nil {
		t.Fatalf("wait state of backend %d: %v", pid, err)
	}
	return waiting
}
