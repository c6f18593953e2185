package tests

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// hardTables are every table of a Docket schema with the key that orders
// its full row dump.
var hardTables = []struct{ name, order string }{
	{"docket_runs", "id"},
	{"docket_claim_policy", "id"},
	{"docket_claim_partitions", "scope_key"},
	{"docket_claim_schedule", "scope_key"},
	{"docket_schema_migrations", "version"},
}

// hardSnapshot is the full text dump of every Docket table, one entry per
// table, read in one snapshot through pool's search_path.
type hardSnapshot map[string]string

// hardSnap dumps every row of every Docket table.
func hardSnap(t testing.TB, pool *pgxpool.Pool) hardSnapshot {
	t.Helper()
	ctx := testContext(t)
	snap := make(hardSnapshot, len(hardTables))
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		for _, tbl := range hardTables {
			var dump string
			sql := fmt.Sprintf(`select coalesce(string_agg(row(t.*)::text, E'\n' order by t.%s), '') from %s t`, tbl.order, tbl.name)
			if err := tx.QueryRow(ctx, sql).Scan(&dump); err != nil {
				return fmt.Errorf("dump %s: %w", tbl.name, err)
			}
			snap[tbl.name] = dump
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return snap
}

// hardExpectUnchanged fails when any table differs between two snapshots.
func hardExpectUnchanged(t testing.TB, what string, before, after hardSnapshot) {
	t.Helper()
	var diffs []string
	for _, tbl := range hardTables {
		if before[tbl.name] != after[tbl.name] {
			diffs = append(diffs, fmt.Sprintf("%s before:\n%s\n%s after:\n%s", tbl.name, before[tbl.name], tbl.name, after[tbl.name]))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%s changed the database:\n%s", what, strings.Join(diffs, "\n"))
	}
}

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

// hardPoolConfig parses databaseURL into a pool config of at most maxConns
// connections.
func hardPoolConfig(t testing.TB, databaseURL string, maxConns int32) *pgxpool.Config {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = maxConns
	return cfg
}

// hardPool opens a pool from cfg that is closed when the test ends.
func hardPool(t testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// hardBackendPID returns the server process of pool's only connection.
func hardBackendPID(t testing.TB, pool *pgxpool.Pool) uint32 {
	t.Helper()
	var pid uint32
	if err := pool.QueryRow(testContext(t), `select pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatalf("backend pid: %v", err)
	}
	return pid
}

// hardTerminate ends the backend pid with pg_terminate_backend.
func hardTerminate(t testing.TB, pool *pgxpool.Pool, pid uint32) {
	t.Helper()
	var ok bool
	if err := pool.QueryRow(testContext(t), `select pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
}

// hardWaitsOnLock reports whether backend pid is blocked on a heavyweight
// lock right now.
func hardWaitsOnLock(t testing.TB, pool *pgxpool.Pool, pid uint32) bool {
	t.Helper()
	var waiting bool
	err := pool.QueryRow(testContext(t),
		`select coalesce(bool_or(wait_event_type = 'Lock'), false) from pg_stat_activity where pid = $1`, pid).Scan(&waiting)
	if err != nil {
		t.Fatalf("wait state of backend %d: %v", pid, err)
	}
	return waiting
}
