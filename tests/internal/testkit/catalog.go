package testkit

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Catalog renders every namespace and the number of relations and
// functions outside the system schemas, so a refused migration can be shown
// to have created nothing.
func Catalog(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	var catalog string
	err := pool.QueryRow(Context(t), `select
		(select string_agg(nspname, ',' order by nspname) from pg_namespace) || '|' ||
		(select count(*) from pg_class c join pg_namespace n on n.oid = c.relnamespace
		  where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')) || '|' ||
		(select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
		  where n.nspname not in ('pg_catalog', 'information_schema'))`).Scan(&catalog)
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return catalog
}
