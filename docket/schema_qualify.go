package docket

import (
	"regexp"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/internal/sqlschema"
)

// qualifier rewrites generated statements to name Docket's relations in one
// schema. Parsing (and pgx's statement preparation) resolves relation names
// before any setting in the same round trip applies, so scoping by
// search_path alone cannot serve an app whose search_path lacks the schema.
// Every relation in db/queries carries sqlschema's marker, which qualify
// replaces. Rewritten texts are cached: the generated statements are a
// fixed set.
type qualifier struct {
	// searchPath is the schema as a search_path value (quoted as needed).
	searchPath string
	schema     string
	cache      sync.Map // statement text -> qualified text
}

// newQualifier returns the qualifier for schema.
func newQualifier(schema string) *qualifier {
	return &qualifier{searchPath: searchPathValue(schema), schema: schema}
}

// qualify returns sql with every marked Docket relation named in the
// qualifier's schema.
func (q *qualifier) qualify(sql string) string {
	if cached, ok := q.cache.Load(sql); ok {
		return cached.(string)
	}
	qualified := sqlschema.Qualify(sql, q.schema)
	q.cache.Store(sql, qualified)
	return qualified
}

// lowerIdentifier is a name PostgreSQL keeps as written without quotes.
var lowerIdentifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// searchPathValue is schema as a search_path entry: bare when PostgreSQL
// keeps it as written, quoted otherwise (an upper-case letter would fold).
func searchPathValue(schema string) string {
	if lowerIdentifier.MatchString(schema) {
		return schema
	}
	return pgx.Identifier{schema}.Sanitize()
}
