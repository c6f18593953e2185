package testkit

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// AppSearchPath is the search_path of an app in the layout the docs
// recommend: its own schemas only, Docket in a schema of its own.
const AppSearchPath = "app,public"

// EveryAppPool runs fn in parallel subtests, once per pgx execution mode on
// an app pool whose search_path is AppSearchPath, and once on a pool behind
// PgBouncer's transaction pooling, over a fresh database from newDatabase
// each time. fn gets the app's pool and a direct pool of the same database
// (for what a transaction pooler cannot carry, such as LISTEN).
func EveryAppPool(t *testing.T, newDatabase func(t *testing.T) string, fn func(t *testing.T, app, direct *pgxpool.Pool)) {
	t.Helper()
	for _, mode := range QueryExecModes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			cfg := PoolConfig(t, MigrationURLWithSearchPath(t, newDatabase(t), AppSearchPath), 4)
			cfg.ConnConfig.DefaultQueryExecMode = mode
			app := Pool(t, cfg)
			fn(t, app, app)
		})
	}
	t.Run("behind PgBouncer", func(t *testing.T) {
		t.Parallel()
		direct := PoolFor(t, MigrationURLWithSearchPath(t, newDatabase(t), AppSearchPath))
		// Behind a pooler the app's search_path is the database's setting.
		ExecSQL(t, direct, fmt.Sprintf(`alter database %s set search_path = %s`, direct.Config().ConnConfig.Database, AppSearchPath))
		b := StartBouncer(t, direct.Config().ConnString(), 2)
		fn(t, BouncerPool(t, b, 4), direct)
	})
}
