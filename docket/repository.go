package docket

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/internal/sqlschema"
)

// AppDB is what SchemaDB runs statements on: the app's pool
// (*pgxpool.Pool), a connection (*pgx.Conn) or a transaction (pgx.Tx).
type AppDB interface {
	gen.DBTX
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// SchemaDB returns db as the executor of the generated repository
// (gen.New(docket.SchemaDB(tx, "docket"))) and of an app's own sqlc queries
// over Docket's tables, for the fairness domain in schema, when the app's
// search_path does not name that schema. Each statement runs in one round
// trip with every relation, type and function it marks /*schema*/ named in
// schema, and with search_path set to schema followed by the app's own for
// that statement only, so the derived-state functions a statement calls,
// current_schema() (the domain's notification channel) and the app's
// unqualified relations all resolve; inside the app's transaction the
// app's search_path is restored after each statement. It works in every pgx
// QueryExecMode and behind a transaction-mode pooler. An empty schema
// returns db itself: the connection's search_path decides. A name that is
// not a plain identifier is ErrInvalidSchemaName.
func SchemaDB(db AppDB, schema string) (gen.DBTX, error) {
	if schema == "" {
		return db, nil
	}
	if err := validateSchemaName(schema); err != nil {
		return nil, err
	}
	names, _ := appSchemas.LoadOrStore(schema, sqlschema.NewSchema(schema))
	_, borrowed := db.(pgx.Tx)
	return names.(*sqlschema.Schema).OnApp(db, borrowed), nil
}

// appSchemas keeps one sqlschema.Schema per schema SchemaDB was given, so
// each statement text is qualified once.
var appSchemas sync.Map

// SchemaDB is the package's SchemaDB in the client's Config.Schema: db
// itself when the client has none.
func (c *Client) SchemaDB(db AppDB) gen.DBTX {
	if c.names == nil {
		return db
	}
	_, borrowed := db.(pgx.Tx)
	return c.names.OnApp(db, borrowed)
}
