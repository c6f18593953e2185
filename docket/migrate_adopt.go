package docket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/sqlschema"
)

var (
	// ErrOutsideLedger reports a schema that holds Docket's tables while no
	// Docket ledger records a version: another tool (goose, psql, ...)
	// applied Docket's migration files there. MigrateUp and MigrateDown
	// refuse it, changing nothing; MigrateAdopt records it when its shape
	// matches a version. An *OutsideLedgerError says which version matches,
	// or the closest; the error of a comparison that could not run (the
	// role lacks CREATE on the database, a read-only transaction) matches
	// it too.
	ErrOutsideLedger = errors.New("docket: schema applied outside Docket's ledger")
	// ErrLedgerExists reports a MigrateAdopt of a schema whose versions are
	// already recorded, in docket_schema_migrations or in the
	// schema_migrations of an earlier release; nothing is changed.
	ErrLedgerExists = errors.New("docket: schema already keeps Docket's ledger")
)

// OutsideLedgerError describes a schema applied outside Docket's ledger and
// what the refused operation did not do. It matches ErrOutsideLedger, and
// ErrSchemaMismatch as well when the shape matches no version.
type OutsideLedgerError struct {
	// Schema is the schema inspected.
	Schema string
	// Version is the embedded migration whose shape the schema's Docket
	// objects have exactly, e.g. "20261201000007"; empty when none matches.
	Version string
	// Closest is, when Version is empty, the version whose shape differs
	// least from the schema's.
	Closest string
	// Differences lists, when Version is empty, how the schema differs from
	// Closest: "missing KIND NAME", "extra KIND NAME" or "changed KIND NAME".
	Differences []string

	op      MigrateDirection // or opStatus
	label   string           // "V7" of Version or Closest
	first   string           // "V1": the label of the oldest migration
	upTo    string           // label of the newest candidate when a Target bounded them
	command string           // the docket command that adopts the schema
}

// opStatus marks an OutsideLedgerError of Migrator.Status.
const opStatus MigrateDirection = -1

// differencesShown bounds the differences an error message lists.
const differencesShown = 5

func (e *OutsideLedgerError) Error() string {
	var b strings.Builder
	b.WriteString(ErrOutsideLedger.Error())
	b.WriteString(": ")
	if e.Version != "" {
		switch e.op {
		case MigrateDown:
			fmt.Fprintf(&b, "no Docket ledger in schema %s; the schema was applied outside Docket (shape matches %s): nothing was rolled back; run `%s` first, or roll back with the tool that applied it",
				e.Schema, e.label, e.command)
		default:
			fmt.Fprintf(&b, "no Docket ledger in schema %s, but Docket's objects are there, applied by another tool (shape matches %s): nothing was applied; run `%s` to record %s in docket_schema_migrations, then `docket migrate up` applies only later versions",
				e.Schema, e.label, e.command, e.span())
		}
		return b.String()
	}
	bound := "any Docket version"
	if e.upTo != "" {
		bound = "any Docket version up to " + e.upTo
	}
	fmt.Fprintf(&b, "no Docket ledger in schema %s, and its Docket objects do not have the shape of %s", e.Schema, bound)
	if e.Closest != "" {
		shown := e.Differences[:min(len(e.Differences), differencesShown)]
		fmt.Fprintf(&b, " (closest %s: %s", e.label, strings.Join(shown, ", "))
		if more := len(e.Differences) - len(shown); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
		b.WriteString(")")
	}
	switch e.op {
	case MigrateUp:
		b.WriteString(": nothing was applied; ")
	case MigrateDown:
		b.WriteString(": nothing was rolled back; roll back with the tool that applied it, or ")
	case MigrateAdopt:
		b.WriteString(": nothing was recorded; ")
	default:
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "restore the shape of one version with the tool that applied it, then run `%s`", e.command)
	return b.String()
}

// span names the versions an adoption records, e.g. "V1..V7".
func (e *OutsideLedgerError) span() string {
	if e.first == e.label {
		return e.label
	}
	return e.first + ".." + e.label
}

// Is matches ErrOutsideLedger, and ErrSchemaMismatch when no version matches.
func (e *OutsideLedgerError) Is(target error) bool {
	return target == ErrOutsideLedger || (target == ErrSchemaMismatch && e.Version == "")
}

// shapeMatch is what a schema holding Docket's objects without a ledger
// recording them has: the version its shape matches, or the closest one.
type shapeMatch struct {
	schema      string
	matched     *migration // nil when none matches
	closest     *migration
	differences []string
	oldest      string // label of the oldest embedded migration
	upTo        string // label of the newest candidate, when a Target bounded them
}

// err is the refusal of op over the schema.
func (s *shapeMatch) err(op MigrateDirection) error {
	e := &OutsideLedgerError{Schema: s.schema, op: op, first: s.oldest, upTo: s.upTo,
		command: "docket migrate adopt --schema " + s.schema}
	switch {
	case s.matched != nil:
		e.Version, e.label = s.matched.version, versionLabel(s.matched.name)
	case s.closest != nil:
		e.Closest, e.label, e.Differences = s.closest.version, versionLabel(s.closest.name), s.differences
	}
	return e
}

// versionLabel is the short name of a migration, "V7" for
// "20261201000007_docket_v7.sql".
func versionLabel(name string) string {
	base := strings.TrimSuffix(name, ".sql")
	return strings.ToUpper(base[strings.LastIndexByte(base, '_')+1:])
}

// matchShape compares the Docket objects of the schema tx's search_path
// names with what the candidates create, oldest first: each is applied in
// turn into a scratch schema inside a savepoint of tx, which is rolled back
// before it returns, so nothing is kept. It returns nil when the schema has
// no docket_runs, which every version creates: Docket was never installed
// there, whatever else of the app's is named docket_*.
func matchShape(ctx context.Context, tx pgx.Tx, schema string, candidates []migration) (*shapeMatch, error) {
	have, err := docketCatalog(ctx, tx)
	if err != nil {
		return nil, err
	}
	if _, installed := have["relation docket_runs"]; !installed {
		return nil, nil
	}
	all, err := embeddedMigrations()
	if err != nil {
		return nil, err
	}
	match := &shapeMatch{schema: schema, oldest: versionLabel(all[0].name)}
	if len(candidates) < len(all) {
		match.upTo = versionLabel(candidates[len(candidates)-1].name)
	}
	fail := func(err error) (*shapeMatch, error) {
		return nil, fmt.Errorf("%w: schema %s holds Docket's objects but no Docket ledger records them; comparing their shape with each Docket version (applied into a scratch schema, rolled back) failed: %w",
			ErrOutsideLedger, schema, err)
	}
	probe, err := tx.Begin(ctx)
	if err != nil {
		return fail(err)
	}
	// Rolled back below; this covers the early returns.
	defer func() { _ = probe.Rollback(context.WithoutCancel(ctx)) }()
	var scratch string
	if err := probe.QueryRow(ctx, `select 'docket_shape_probe_' || pg_backend_pid()`).Scan(&scratch); err != nil {
		return fail(err)
	}
	if _, err := probe.Exec(ctx, "create schema "+pgx.Identifier{scratch}.Sanitize()); err != nil {
		return fail(err)
	}
	if _, err := probe.Exec(ctx, `select set_config('search_path', $1, true)`, scratch); err != nil {
		return fail(err)
	}
	fewest := -1
	for i := range candidates {
		if err := execScript(ctx, probe, candidates[i].up); err != nil {
			return fail(fmt.Errorf("applying %s: %w", candidates[i].name, err))
		}
		want, err := docketCatalog(ctx, probe)
		if err != nil {
			return fail(err)
		}
		differences := catalogDifferences(want, have)
		if len(differences) == 0 {
			match.matched = &candidates[i]
			break
		}
		// Ties go to the newer version: later versions only add.
		if fewest < 0 || len(differences) <= fewest {
			fewest, match.closest, match.differences = len(differences), &candidates[i], differences
		}
	}
	if err := probe.Rollback(ctx); err != nil {
		return fail(err)
	}
	// Rolling the savepoint back restores the schema's search_path; setting
	// it again keeps the caller's statements in the schema regardless.
	if _, err := tx.Exec(ctx, `select set_config('search_path', $1, true)`, sqlschema.SearchPathValue(schema)); err != nil {
		return nil, fmt.Errorf("docket: migrate: selecting schema %s: %w", schema, err)
	}
	if match.matched != nil {
		match.closest, match.differences = nil, nil
	}
	return match, nil
}

// docketCatalog lists the Docket objects of the current schema by key, with
// the schema's own name in their definitions replaced, so the listings of
// two schemas compare equal when only their names differ.
func docketCatalog(ctx context.Context, tx pgx.Tx) (map[string]string, error) {
	var schema, quoted string
	if err := tx.QueryRow(ctx, `select coalesce(current_schema(), ''), coalesce(quote_ident(current_schema()), '')`).Scan(&schema, &quoted); err != nil {
		return nil, fmt.Errorf("docket: migrate: reading the current schema: %w", err)
	}
	rows, err := dbgen.New(tx).DocketCatalog(ctx)
	if err != nil {
		return nil, fmt.Errorf("docket: migrate: reading the shape of schema %s: %w", schema, err)
	}
	// A qualified name as PostgreSQL prints it, not where the name ends
	// another identifier.
	qualified := regexp.MustCompile(`(^|[^A-Za-z0-9_$"])` + regexp.QuoteMeta(quoted) + `\.`)
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		def := qualified.ReplaceAllString(r.Definition, "${1}SCHEMA.")
		if r.Settings != nil {
			def += " settings=" + settingsOf(r.Settings, schema)
		}
		out[r.Key] = def
	}
	return out, nil
}

// settingsOf renders a function's settings with the schema in its
// search_path replaced. PostgreSQL keeps a search_path as it was written
// (docket, "docket", "docket, public"), so its entries are read as the
// identifiers they name first.
func settingsOf(settings []string, schema string) string {
	out := make([]string, len(settings))
	for i, setting := range settings {
		if value, ok := strings.CutPrefix(setting, "search_path="); ok {
			entries := searchPathEntries(value)
			for j, e := range entries {
				if e == schema {
					entries[j] = "SCHEMA"
				}
			}
			setting = "search_path=" + strings.Join(entries, ",")
		}
		out[i] = setting
	}
	return strings.Join(out, "; ")
}

// searchPathEntries splits a search_path value into the names it lists: a
// quoted entry as written (with "" for a quote), an unquoted one trimmed and
// folded to lower case, as PostgreSQL reads them.
func searchPathEntries(value string) []string {
	var entries []string
	var name strings.Builder
	quoted, inQuotes := false, false
	flush := func() {
		e := name.String()
		if !quoted {
			e = strings.ToLower(strings.TrimSpace(e))
		}
		entries = append(entries, e)
		name.Reset()
		quoted = false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case inQuotes && c == '"' && i+1 < len(value) && value[i+1] == '"':
			name.WriteByte('"')
			i++
		case c == '"':
			inQuotes, quoted = !inQuotes, true
		case inQuotes:
			name.WriteByte(c)
		case c == ',':
			flush()
		case c == ' ' || c == '\t':
			if !quoted {
				name.WriteByte(c)
			}
		default:
			name.WriteByte(c)
		}
	}
	flush()
	return entries
}

// catalogDifferences lists how have differs from want, by key in order.
func catalogDifferences(want, have map[string]string) []string {
	keys := slices.Sorted(maps.Keys(want))
	for k := range have {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		w, inWant := want[k]
		h, inHave := have[k]
		switch {
		case !inHave:
			out = append(out, "missing "+shortKey(k))
		case !inWant:
			out = append(out, "extra "+shortKey(k))
		case w != h:
			out = append(out, "changed "+shortKey(k))
		}
	}
	return out
}

// shortKey drops a function's argument list from a catalog key.
func shortKey(key string) string {
	if name, ok := strings.CutPrefix(key, "function "); ok {
		name, _, _ = strings.Cut(name, "(")
		return "function " + name
	}
	return key
}

// adopt records the versions up to the one the schema's shape matches in a
// new ledger, in one transaction holding the migration lock.
func adopt(ctx context.Context, b txBeginner, schema string, candidates []migration, log io.Writer) error {
	return pgx.BeginFunc(ctx, b, func(tx pgx.Tx) error {
		q := dbgen.New(tx)
		if err := q.LockMigrations(ctx, schema); err != nil {
			return fmt.Errorf("docket: migrate: locking schema %s: %w", schema, err)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select 1 from pg_catalog.pg_namespace where nspname = $1)`, schema).Scan(&exists); err != nil {
			return fmt.Errorf("docket: migrate: looking up schema %s: %w", schema, err)
		}
		if !exists {
			return fmt.Errorf("%w: schema %s does not exist: nothing to adopt (`docket migrate up --create` installs Docket)", ErrSchemaMismatch, schema)
		}
		if _, err := tx.Exec(ctx, `select set_config('search_path', $1, true)`, sqlschema.SearchPathValue(schema)); err != nil {
			return fmt.Errorf("docket: migrate: selecting schema %s: %w", schema, err)
		}
		recorded, where, err := recordedVersions(ctx, q, schema)
		if err != nil {
			return err
		}
		if len(recorded) > 0 {
			return fmt.Errorf("%w: schema %s records %s in %s: nothing was adopted; `docket migrate status --schema %s` lists them",
				ErrLedgerExists, schema, strings.Join(recorded, ", "), where, schema)
		}
		match, err := matchShape(ctx, tx, schema, candidates)
		if err != nil {
			return err
		}
		if match == nil {
			return fmt.Errorf("%w: no Docket tables in schema %s: nothing to adopt (`docket migrate up --create` installs Docket)", ErrSchemaMismatch, schema)
		}
		if match.matched == nil {
			return match.err(MigrateAdopt)
		}
		if _, err := tx.Exec(ctx, db.LedgerDDL); err != nil {
			return fmt.Errorf("docket: migrate: creating the ledger in schema %s: %w", schema, err)
		}
		fmt.Fprintf(log, "schema %s has the shape of %s, applied outside Docket's ledger: recording it in docket_schema_migrations\n",
			schema, versionLabel(match.matched.name))
		for _, m := range candidates {
			if err := q.RecordMigration(ctx, m.version); err != nil {
				return fmt.Errorf("docket: migrate: recording %s: %w", m.name, err)
			}
			fmt.Fprintf(log, "recorded %s in schema %s\n", m.name, schema)
			if m.version == match.matched.version {
				break
			}
		}
		return nil
	})
}

// recordedVersions are the Docket versions the schema (the search_path)
// records, and where: Docket's ledger, else an earlier release's entries
// in dbmate's schema_migrations.
func recordedVersions(ctx context.Context, q *dbgen.Queries, schema string) ([]string, string, error) {
	exists, err := q.LedgerExists(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("docket: migrate: reading the ledger of schema %s: %w", schema, err)
	}
	if exists {
		versions, err := q.LedgerVersions(ctx)
		if err != nil {
			return nil, "", fmt.Errorf("docket: migrate: reading the ledger of schema %s: %w", schema, err)
		}
		if len(versions) > 0 {
			return versions, "docket_schema_migrations", nil
		}
	}
	legacy, err := q.LegacyLedgerHoldsDocket(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("docket: migrate: looking for an earlier ledger in schema %s: %w", schema, err)
	}
	if !legacy {
		return nil, "", nil
	}
	known, err := embeddedVersions()
	if err != nil {
		return nil, "", err
	}
	versions, err := q.LegacyLedgerVersions(ctx, known)
	if err != nil {
		return nil, "", fmt.Errorf("docket: migrate: reading schema_migrations of schema %s: %w", schema, err)
	}
	return versions, "schema_migrations (an earlier release's ledger; `docket migrate up` copies them)", nil
}
