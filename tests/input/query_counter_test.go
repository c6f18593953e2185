package input

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// queryCounter is a pgx tracer that counts the statements a pool sends,
// so a test can prove that refused input never reached the server.
type queryCounter struct{ n atomic.Int64 }

// TraceQueryStart counts one statement.
func (c *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TraceQueryEnd does nothing.
func (c *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
