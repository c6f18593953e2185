package migration

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/docket"
	"github.com/docketrun/docket-go/tests/internal/testkit"
)

// The columns Open requires are exactly those of a migrated schema, table
// by table in column order, so the list cannot drift from the migrations.
func TestStartupRequiredColumnsAreTheMigratedOnes(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	rows, err := pool.Query(testkit.Context(t), `
		select c.table_name::text, c.column_name::text
		  from information_schema.columns c
		 where c.table_schema = current_schema() and c.table_name in
		       ('docket_runs', 'docket_claim_policy', 'docket_claim_partitions', 'docket_claim_schedule', 'docket_schedules')
		 order by array_position(array['docket_runs', 'docket_claim_policy', 'docket_claim_partitions', 'docket_claim_schedule', 'docket_schedules'], c.table_name::text),
		          c.ordinal_position`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (db.Column, error) {
		var c db.Column
		return c, r.Scan(&c.Table, &c.Name)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, db.Columns) {
		t.Fatalf("migrated columns\n%v\ndb.Columns\n%v", got, db.Columns)
	}
}

// A schema applied by another tool that lacks a column is refused with the
// missing columns and the schema Open looked in.
func TestStartupNamesMissingColumns(t *testing.T) {
	t.Parallel()
	pool := testkit.NewPool(t)
	testkit.ExecSQL(t, pool, `drop table docket_schema_migrations; alter table docket_claim_partitions drop column admission_epoch`)
	_, err := docket.Open(testkit.Context(t), pool, testkit.TenantFairConfig(2))
	if !errors.Is(err, docket.ErrSchemaMismatch) || !strings.Contains(err.Error(), `missing in schema "public" (search_path `) ||
		!strings.HasSuffix(err.Error(), "): docket_claim_partitions.admission_epoch") {
		t.Fatalf("Open = %v; want ErrSchemaMismatch naming schema public and the one missing column", err)
	}
}
