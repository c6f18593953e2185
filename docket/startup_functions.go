package docket

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/internal/dbgen"
)

// verifyFunctions compares every Docket function installed in the schema with
// the source this binary embeds for it (the version the newest migration
// installs), by the MD5 of the body PostgreSQL stores. A missing or changed
// function is ErrSchemaMismatch naming each function, its expected source
// file and what differs. Overloads are the shape check's concern; here one
// installed body of the name must match.
func verifyFunctions(ctx context.Context, q *dbgen.Queries) error {
	want, err := db.InstalledFunctions()
	if err != nil {
		return fmt.Errorf("docket: reading embedded functions: %w", err)
	}
	rows, err := q.InstalledFunctionBodies(ctx)
	if err != nil {
		return fmt.Errorf("docket: reading installed functions: %w", err)
	}
	installed := map[string][]string{}
	for _, r := range rows {
		installed[r.Name] = append(installed[r.Name], r.BodyMd5)
	}
	var problems []string
	for _, fn := range want {
		bodies := installed[fn.Name]
		switch {
		case len(bodies) == 0:
			problems = append(problems, fmt.Sprintf("function %s is missing (want %s)", fn.Name, fn.File))
		case !slices.Contains(bodies, fn.BodyMD5):
			problems = append(problems, fmt.Sprintf("function %s differs from %s (installed body md5 %s, want %s)",
				fn.Name, fn.File, strings.Join(bodies, ", "), fn.BodyMD5))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrSchemaMismatch, strings.Join(problems, "; "))
	}
	return nil
}
