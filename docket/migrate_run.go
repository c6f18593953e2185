package docket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/internal/sqlschema"
)

// ErrMigrationOrder reports a schema whose applied migrations this binary
// cannot continue from: a version it does not know (a newer release
// migrated the schema), or a pending migration older than an applied one.
var ErrMigrationOrder = errors.New("docket: migrations out of order")

// txBeginner starts a transaction: a connection, a pool, or a transaction
// (which starts a savepoint).
type txBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// migrate applies every pending migration up to opts.Target (one
// transaction each), rolls back the newest applied one, or adopts, and says
// what it did on log.
func migrate(ctx context.Context, b txBeginner, schema string, direction MigrateDirection, opts MigrateOptions, log io.Writer) error {
	ms, err := migrationsUpTo(opts.Target)
	if err != nil {
		return err
	}
	if log == nil {
		log = io.Discard
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	switch direction {
	case MigrateDown:
		// Down rolls back the newest applied migration, whatever the target.
		all, err := embeddedMigrations()
		if err != nil {
			return err
		}
		return rollbackNewest(ctx, b, schema, all, opts.RequireInstalled, log)
	case MigrateAdopt:
		return adopt(ctx, b, schema, ms, log)
	}
	applied := 0
	for {
		m, err := applyNext(ctx, b, schema, ms, opts.RequireInstalled, log)
		if err != nil {
			return err
		}
		if m == nil {
			break
		}
		applied++
	}
	if applied == 0 {
		fmt.Fprintf(log, "schema %s is up to date at %s: nothing to apply\n", schema, ms[len(ms)-1].version)
	}
	return nil
}

// applyNext applies the oldest pending migration of ms, in its own
// transaction that also records it, and returns it; nil when none is pending.
// With requireInstalled a schema where nothing is applied is refused.
func applyNext(ctx context.Context, b txBeginner, schema string, ms []migration, requireInstalled bool, log io.Writer) (*migration, error) {
	var next *migration
	err := inMigrationTx(ctx, b, schema, log, MigrateUp, requireInstalled, func(q *dbgen.Queries, tx pgx.Tx, applied []string, _ *shapeMatch) error {
		pending, err := pendingMigration(ms, applied, schema)
		if err != nil || pending == nil {
			return err
		}
		start := time.Now()
		if err := execScript(ctx, tx, pending.up); err != nil {
			return fmt.Errorf("docket: migrate: applying %s: %w", pending.name, err)
		}
		if err := q.RecordMigration(ctx, pending.version); err != nil {
			return fmt.Errorf("docket: migrate: recording %s: %w", pending.name, err)
		}
		fmt.Fprintf(log, "applied %s in schema %s (%s)\n", pending.name, schema, time.Since(start).Round(time.Millisecond))
		next = pending
		return nil
	})
	if err != nil {
		return nil, err
	}
	return next, nil
}

// rollbackNewest runs the down section of the newest applied migration and
// forgets it, in one transaction. With requireInstalled a schema where
// nothing is applied is refused.
func rollbackNewest(ctx context.Context, b txBeginner, schema string, ms []migration, requireInstalled bool, log io.Writer) error {
	return inMigrationTx(ctx, b, schema, log, MigrateDown, requireInstalled, func(q *dbgen.Queries, tx pgx.Tx, applied []string, _ *shapeMatch) error {
		if len(applied) == 0 {
			fmt.Fprintf(log, "schema %s has no Docket migration applied: nothing to roll back\n", schema)
			return nil
		}
		if err := refusePreRelease(applied, "in schema "+schema, ErrMigrationOrder); err != nil {
			return err
		}
		newest := applied[len(applied)-1]
		at := slices.IndexFunc(ms, func(m migration) bool { return m.version == newest })
		if at < 0 {
			return fmt.Errorf("%w: the newest applied migration %s is not among this binary's %v", ErrMigrationOrder, newest, versionsOf(ms))
		}
		start := time.Now()
		if err := execScript(ctx, tx, ms[at].down); err != nil {
			return fmt.Errorf("docket: migrate: rolling back %s: %w", ms[at].name, err)
		}
		if _, err := q.ForgetMigration(ctx, newest); err != nil {
			return fmt.Errorf("docket: migrate: forgetting %s: %w", ms[at].name, err)
		}
		fmt.Fprintf(log, "rolled back %s in schema %s (%s)\n", ms[at].name, schema, time.Since(start).Round(time.Millisecond))
		return nil
	})
}

// pendingMigration is the oldest migration of ms (the migrations up to the
// target) not in applied, or nil. An applied version the binary does not
// know, or a pending one older than an applied one, is ErrMigrationOrder.
func pendingMigration(ms []migration, applied []string, schema string) (*migration, error) {
	known, err := embeddedVersions()
	if err != nil {
		return nil, err
	}
	if err := refusePreRelease(applied, "in schema "+schema, ErrMigrationOrder); err != nil {
		return nil, err
	}
	for _, v := range applied {
		if !slices.Contains(known, v) {
			return nil, fmt.Errorf("%w: migration %s is applied but this binary knows only %v (a newer release migrated the schema)", ErrMigrationOrder, v, known)
		}
	}
	for i := range ms {
		if slices.Contains(applied, ms[i].version) {
			continue
		}
		if len(applied) > 0 && applied[len(applied)-1] > ms[i].version {
			return nil, fmt.Errorf("%w: %s is pending but the later %s is applied", ErrMigrationOrder, ms[i].name, applied[len(applied)-1])
		}
		return &ms[i], nil
	}
	return nil, nil
}

// migrationStatus reports each migration of opts as applied or pending, or
// as outside the ledger when the schema's Docket objects match its version
// or a later one while no ledger records them. It keeps nothing: a schema
// or ledger that does not exist means pending.
func migrationStatus(ctx context.Context, b txBeginner, schema string, opts MigrateOptions) ([]MigrationStatus, error) {
	ms, err := migrationsUpTo(opts.Target)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var statuses []MigrationStatus
	err = inMigrationTx(ctx, b, schema, io.Discard, opStatus, opts.RequireInstalled, func(_ *dbgen.Queries, _ pgx.Tx, applied []string, outside *shapeMatch) error {
		if outside != nil && outside.matched == nil {
			return outside.err(opStatus)
		}
		for _, m := range ms {
			statuses = append(statuses, MigrationStatus{Name: m.name, Applied: slices.Contains(applied, m.version),
				OutsideLedger: outside != nil && m.version <= outside.matched.version})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return statuses, nil
}

// inMigrationTx runs fn in a transaction of b whose search_path is schema,
// with the applied versions. For MigrateUp and MigrateDown it holds the
// schema's migration lock and creates the schema and Docket's ledger when
// missing, copying Docket's versions from dbmate's schema_migrations once
// (schemas migrated by earlier releases); for opStatus it keeps nothing.
// A schema holding Docket's objects that no ledger records (another tool
// applied them) is an *OutsideLedgerError for MigrateUp and MigrateDown,
// before anything is written; opStatus gets its shape match. With
// requireInstalled a schema where no Docket migration is applied, and none
// was applied outside the ledger, is ErrNotInstalled, before fn runs and
// with the transaction rolled back.
func inMigrationTx(ctx context.Context, b txBeginner, schema string, log io.Writer, op MigrateDirection, requireInstalled bool,
	fn func(q *dbgen.Queries, tx pgx.Tx, applied []string, outside *shapeMatch) error) error {
	write := op != opStatus
	return pgx.BeginFunc(ctx, b, func(tx pgx.Tx) error {
		q := dbgen.New(tx)
		if write {
			if err := q.LockMigrations(ctx, schema); err != nil {
				return fmt.Errorf("docket: migrate: locking schema %s: %w", schema, err)
			}
		}
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select 1 from pg_catalog.pg_namespace where nspname = $1)`, schema).Scan(&exists); err != nil {
			return fmt.Errorf("docket: migrate: looking up schema %s: %w", schema, err)
		}
		switch {
		case !exists && requireInstalled:
			return notInstalled(schema, false)
		case !exists && !write:
			return fn(nil, tx, nil, nil)
		}
		if !exists {
			if _, err := tx.Exec(ctx, "create schema "+pgx.Identifier{schema}.Sanitize()); err != nil {
				return fmt.Errorf("docket: migrate: creating schema %s: %w", schema, err)
			}
		}
		if _, err := tx.Exec(ctx, `select set_config('search_path', $1, true)`, sqlschema.SearchPathValue(schema)); err != nil {
			return fmt.Errorf("docket: migrate: selecting schema %s: %w", schema, err)
		}
		if exists {
			recorded, _, err := recordedVersions(ctx, q, schema)
			if err != nil {
				return err
			}
			if len(recorded) == 0 {
				// Only a fresh schema, or one another tool migrated, records
				// nothing; this compares the shape once, then the ledger exists.
				all, err := embeddedMigrations()
				if err != nil {
					return err
				}
				outside, err := matchShape(ctx, tx, schema, all)
				if err != nil {
					return err
				}
				if outside != nil && write {
					return outside.err(op)
				}
				if outside != nil {
					return fn(q, tx, nil, outside)
				}
			}
		}
		applied, err := appliedVersions(ctx, q, tx, schema, log, write)
		if err != nil {
			return err
		}
		if requireInstalled && len(applied) == 0 {
			return notInstalled(schema, true)
		}
		return fn(q, tx, applied, nil)
	})
}

// appliedVersions reads Docket's ledger; when it does not exist yet, the
// versions an earlier release recorded in dbmate's ledger count, and with
// write the ledger is created holding them.
func appliedVersions(ctx context.Context, q *dbgen.Queries, tx pgx.Tx, schema string, log io.Writer, write bool) ([]string, error) {
	exists, err := q.LedgerExists(ctx)
	if err != nil {
		return nil, fmt.Errorf("docket: migrate: reading the ledger of schema %s: %w", schema, err)
	}
	if exists {
		versions, err := q.LedgerVersions(ctx)
		if err != nil {
			return nil, fmt.Errorf("docket: migrate: reading the ledger of schema %s: %w", schema, err)
		}
		return versions, nil
	}
	var adopted []string
	legacy, err := q.LegacyLedgerHoldsDocket(ctx)
	if err != nil {
		return nil, fmt.Errorf("docket: migrate: looking for an earlier ledger in schema %s: %w", schema, err)
	}
	if legacy {
		known, err := embeddedVersions()
		if err != nil {
			return nil, err
		}
		if adopted, err = q.LegacyLedgerVersions(ctx, known); err != nil {
			return nil, fmt.Errorf("docket: migrate: reading schema_migrations of schema %s: %w", schema, err)
		}
	}
	if !write {
		return adopted, nil
	}
	if _, err := tx.Exec(ctx, db.LedgerDDL); err != nil {
		return nil, fmt.Errorf("docket: migrate: creating the ledger in schema %s: %w", schema, err)
	}
	for _, v := range adopted {
		if err := q.RecordMigration(ctx, v); err != nil {
			return nil, fmt.Errorf("docket: migrate: adopting version %s: %w", v, err)
		}
	}
	if len(adopted) > 0 {
		fmt.Fprintf(log, "recorded %v from schema_migrations in docket_schema_migrations of schema %s\n", adopted, schema)
	}
	return adopted, nil
}

// execScript runs a migration section with the simple protocol, which
// takes several statements in one message, as dbmate does.
func execScript(ctx context.Context, tx pgx.Tx, sql string) error {
	_, err := tx.Conn().PgConn().Exec(ctx, sql).ReadAll()
	return err
}

// keepingSearchPath runs fn, which may set search_path locally in tx, and
// then restores the caller's value for the rest of tx.
func keepingSearchPath(ctx context.Context, tx pgx.Tx, fn func() error) error {
	var previous string
	if err := tx.QueryRow(ctx, `select current_setting('search_path')`).Scan(&previous); err != nil {
		return fmt.Errorf("docket: migrate: reading search_path: %w", err)
	}
	if err := fn(); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `select set_config('search_path', $1, true)`, previous); err != nil {
		return fmt.Errorf("docket: migrate: restoring search_path: %w", err)
	}
	return nil
}

// ErrPreReleaseSchema reports a schema migrated by a pre-release build of
// Docket: its ledger records one of the versions V3 to V24 that the
// development history before release 0.1.0 added. Release 0.1.0 squashed
// that history into V2; no release ever shipped those versions, so no
// upgrade path leads from them. The schema must be dropped (or restored
// from a V1 or V2 backup) and migrated again. It also matches
// ErrSchemaMismatch, and ErrMigrationOrder when a migration was asked for.
var ErrPreReleaseSchema = errors.New("docket: schema migrated by a pre-release build")

// The ledger versions of the pre-release history: migrations
// 20261201000003 (V3) to 20261203000024 (V24), frozen since release 0.1.0
// replaced them.
const (
	firstPreReleaseVersion = "20261201000003"
	lastPreReleaseVersion  = "20261203000024"
)

// preReleaseVersion reports whether version is a pre-release ledger version.
func preReleaseVersion(version string) bool {
	return len(version) == len(lastPreReleaseVersion) &&
		version >= firstPreReleaseVersion && version <= lastPreReleaseVersion
}

// refusePreRelease returns an ErrPreReleaseSchema error, wrapping also,
// when applied holds a pre-release version, naming its V number; else nil.
// where says which ledger, as "in schema docket".
func refusePreRelease(applied []string, where string, also error) error {
	for _, v := range applied {
		if !preReleaseVersion(v) {
			continue
		}
		number, _ := strconv.Atoi(v[len(v)-6:])
		return fmt.Errorf("%w (%w): the ledger %s records migration %s (pre-release V%d); release 0.1.0 ships schema version 2 and no release shipped V3 to V24, so nothing upgrades from them: drop the schema (or restore a V1 or V2 backup) and migrate again",
			ErrPreReleaseSchema, also, where, v, number)
	}
	return nil
}
