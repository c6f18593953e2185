package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Tables are every table of a Docket schema with the key that orders
// its full row dump.
var Tables = []struct{ name, order string }{
	{"docket_runs", "id"},
	{"docket_claim_policy", "id"},
	{"docket_claim_partitions", "scope_key"},
	{"docket_claim_schedule", "scope_key"},
	{"docket_schema_migrations", "version"},
}

// Snapshot is the full text dump of every Docket table, one entry per
// table, read in one snapshot through pool's search_path.
type Snapshot map[string]string

// Snap dumps every row of every Docket table.
func Snap(t testing.TB, pool *pgxpool.Pool) Snapshot {
	t.Helper()
	ctx := Context(t)
	snap := make(Snapshot, len(Tables))
	err := pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		for _, tbl := range Tables {
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

// ExpectUnchanged fails when any table differs between two snapshots.
func ExpectUnchanged(t testing.TB, what string, before, after Snapshot) {
	t.Helper()
	var diffs []string
	for _, tbl := range Tables {
		if before[tbl.name] != after[tbl.name] {
			diffs = append(diffs, fmt.Sprintf("%s before:\n%s\n%s after:\n%s", tbl.name, before[tbl.name], tbl.name, after[tbl.name]))
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("%s changed the database:\n%s", what, strings.Join(diffs, "\n"))
	}
}

// PoolConfig parses databaseURL into a pool config of at most maxConns
// connections.
func PoolConfig(t testing.TB, databaseURL string, maxConns int32) *pgxpool.Config {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		t.Fatalf("pool config: %v", err)
	}
	cfg.MaxConns = maxConns
	return cfg
}

// Pool opens a pool from cfg that is closed when the test ends.
func Pool(t testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// BackendPID returns the server process of pool's only connection.
func BackendPID(t testing.TB, pool *pgxpool.Pool) uint32 {
	t.Helper()
	var pid uint32
	if err := pool.QueryRow(Context(t), `select pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatalf("backend pid: %v", err)
	}
	return pid
}
