package docket

import (
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// docketRelation matches the names of Docket's tables and claim functions
// as whole words; qualify skips those already qualified or quoted.
var docketRelation = regexp.MustCompile(`\b(docket_runs|docket_claim_policy|docket_claim_partitions|docket_claim_schedule|docket_schema_migrations|docket_tenant_fair_claim|docket_legacy_claim)\b`)

// qualifier rewrites generated statements to name Docket's relations in one
// schema. Parsing (and pgx's statement preparation) resolves relation names
// before any setting in the same round trip applies, so scoping by
// search_path alone cannot serve an app whose search_path lacks the schema.
// Rewritten texts are cached: the generated statements are a fixed set.
type qualifier struct {
	// searchPath is the schema as a search_path value (quoted as needed).
	searchPath string
	prefix     string
	cache      sync.Map // statement text -> qualified text
}

// newQualifier returns the qualifier for schema.
func newQualifier(schema string) *qualifier {
	return &qualifier{searchPath: searchPathValue(schema), prefix: pgx.Identifier{schema}.Sanitize() + "."}
}

// qualify returns sql with every unqualified Docket relation named in the
// qualifier's schema.
func (q *qualifier) qualify(sql string) string {
	if cached, ok := q.cache.Load(sql); ok {
		return cached.(string)
	}
	var out strings.Builder
	last := 0
	for _, m := range docketRelation.FindAllStringIndex(sql, -1) {
		if m[0] > 0 && strings.ContainsRune(`."'`, rune(sql[m[0]-1])) {
			continue
		}
		out.WriteString(sql[last:m[0]])
		out.WriteString(q.prefix)
		out.WriteString(sql[m[0]:m[1]])
		last = m[1]
	}
	out.WriteString(sql[last:])
	qualified := out.String()
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
