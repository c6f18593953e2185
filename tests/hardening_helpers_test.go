package tests

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
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
