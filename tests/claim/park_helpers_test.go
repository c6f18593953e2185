package claim

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Helpers of the parked-partition tests (docs/fairness-parked.md).

// parkWriter is a transaction on a connection of its own, held open at an
// exact point of a test: it has written but not committed, or it waits on a
// lock.
type parkWriter struct {
	t    testing.TB
	conn *pgx.Conn
	tx   pgx.Tx
	pid  uint32
}

// newParkWriter opens the writer's connection and transaction.
func newParkWriter(t testing.TB, pool *pgxpool.Pool) *parkWriter {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatalf("connect writer: %v", err)
	}
	w := &parkWriter{t: t, conn: conn}
	if err := conn.QueryRow(ctx, `select pg_backend_pid()`).Scan(&w.pid); err != nil {
		t.Fatalf("writer pid: %v", err)
	}
	if w.tx, err = conn.Begin(ctx); err != nil {
		t.Fatalf("writer begin: %v", err)
	}
	t.Cleanup(func() {
		_ = w.tx.Rollback(ctx)
		_ = conn.Close(ctx)
	})
	return w
}

// commit commits the writer's transaction.
func (w *parkWriter) commit() {
	w.t.Helper()
	if err := w.tx.Commit(context.Background()); err != nil {
		w.t.Fatalf("writer commit: %v", err)
	}
}
