package docket

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
)

// undefinedTable is SQLSTATE 42P01: the schema was never migrated here.
const undefinedTable = "42P01"

// verifySchema requires exactly the embedded migrations (schema version 3)
// plus the validated shape: the marker column, the parking column, one claim
// function with the fixed six-argument identity, and the singleton policy
// row. It only reads.
func verifySchema(ctx context.Context, q *gen.Queries) error {
	want, err := embeddedVersions()
	if err != nil {
		return err
	}
	applied, err := q.AppliedMigrationVersions(ctx)
	if err != nil {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == undefinedTable {
			return fmt.Errorf("%w: no Docket migrations in this schema: %w", ErrSchemaMismatch, err)
		}
		return fmt.Errorf("docket: reading schema_migrations: %w", err)
	}
	if !slices.Equal(applied, want) {
		return fmt.Errorf("%w: applied migrations %v, want %v", ErrSchemaMismatch, applied, want)
	}
	shape, err := q.SchemaShape(ctx)
	if err != nil {
		return fmt.Errorf("docket: reading schema shape: %w", err)
	}
	if !shape.HasMarkerColumn {
		return fmt.Errorf("%w: docket_runs.tenant_admitted_at is missing", ErrSchemaMismatch)
	}
	if !shape.HasParkedColumn {
		return fmt.Errorf("%w: docket_claim_schedule.parked_until is missing", ErrSchemaMismatch)
	}
	if shape.ClaimFunctionCount != 1 || shape.ClaimFunctionExactCount != 1 {
		return fmt.Errorf("%w: want exactly one six-argument docket_tenant_fair_claim, found %d function(s), %d with that identity",
			ErrSchemaMismatch, shape.ClaimFunctionCount, shape.ClaimFunctionExactCount)
	}
	// Both engines lock the singleton; without it nothing could be admitted.
	if _, err := q.GetClaimPolicy(ctx); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: the docket_claim_policy singleton row is missing", ErrSchemaMismatch)
		}
		return fmt.Errorf("docket: reading claim policy: %w", err)
	}
	return nil
}

// embeddedVersions lists the version prefixes of the embedded migrations.
func embeddedVersions() ([]string, error) {
	entries, err := fs.ReadDir(db.Migrations, db.MigrationsDir)
	if err != nil {
		return nil, fmt.Errorf("docket: reading embedded migrations: %w", err)
	}
	var versions []string
	for _, e := range entries {
		name := path.Base(e.Name())
		if version, _, ok := strings.Cut(name, "_"); ok && strings.HasSuffix(name, ".sql") {
			versions = append(versions, version)
		}
	}
	slices.Sort(versions)
	return versions, nil
}

// synchronizePolicy persists the configured engine in the singleton policy
// row, in one transaction that holds the row lock, so concurrent starts of
// one homogeneous configuration serialize and converge to one write.
// TenantFair: the first start initializes the default; a changed configured
// cap overwrites it; an unchanged one writes nothing, so a runtime default
// change survives restarts. Overrides are never touched.
func (c *Client) synchronizePolicy(ctx context.Context) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		q := c.queries.WithTx(tx)
		row, err := q.LockClaimPolicy(ctx)
		if err != nil {
			return fmt.Errorf("docket: locking claim policy: %w", err)
		}
		if engine, ok := c.engine.(policy.TenantFair); ok {
			return synchronizeTenantFair(ctx, q, row, engine)
		}
		return synchronizeLegacy(ctx, q, row)
	})
}

// synchronizeLegacy selects the Legacy engine. It leaves the persisted
// default and every marker alone: Legacy never reads or creates markers, and
// lifecycle writes keep clearing them as usual.
func synchronizeLegacy(ctx context.Context, q *gen.Queries, row gen.DocketClaimPolicy) error {
	legacy := policy.Legacy{}.Name()
	if row.AdmissionMode == legacy {
		return nil
	}
	if _, err := q.SetAdmissionMode(ctx, legacy); err != nil {
		return fmt.Errorf("docket: selecting legacy admission: %w", err)
	}
	return nil
}

// synchronizeTenantFair selects TenantFair and persists its configured cap
// and ParkDormant.
func synchronizeTenantFair(ctx context.Context, q *gen.Queries, row gen.DocketClaimPolicy, engine policy.TenantFair) error {
	switching := row.AdmissionMode != engine.Name()
	if switching {
		// Claims taken under Legacy become admissions, or an expired one
		// could never be recovered by TenantFair's admitted-only expired page.
		// A scope pushed over its cap this way carries debt; nothing is trimmed.
		if _, err := q.MarkLegacyClaimsAdmitted(ctx); err != nil {
			return fmt.Errorf("docket: adopting legacy claims: %w", err)
		}
		// Legacy claims ignore parking, so a parked partition may now hold
		// a claim; the walk starts again from the whole ring.
		if _, err := q.UnparkAllPartitions(ctx); err != nil {
			return fmt.Errorf("docket: unparking partitions: %w", err)
		}
	}
	configured := int32(engine.DefaultMaxActiveRuns)
	if row.MaxActive == nil || row.ConfiguredMaxActive == nil || *row.ConfiguredMaxActive != configured {
		if _, err := q.InitializeClaimPolicy(ctx, &configured); err != nil {
			return fmt.Errorf("docket: persisting the configured claim policy default: %w", err)
		}
	} else if switching {
		if _, err := q.SetAdmissionMode(ctx, engine.Name()); err != nil {
			return fmt.Errorf("docket: selecting tenant_fair admission: %w", err)
		}
	}
	return synchronizeParkDormant(ctx, q, row, engine.ParkDormant)
}

// synchronizeParkDormant persists a changed configured ParkDormant, exactly
// like the cap: an unchanged one writes nothing, so a runtime change made
// with PutClaimPolicyParking survives restarts until the configuration
// itself changes.
func synchronizeParkDormant(ctx context.Context, q *gen.Queries, row gen.DocketClaimPolicy, configured bool) error {
	if row.ConfiguredParkDormant == configured {
		return nil
	}
	if _, err := q.SynchronizeParkDormant(ctx, configured); err != nil {
		return fmt.Errorf("docket: persisting the configured park_dormant: %w", err)
	}
	if !configured {
		if _, err := q.UnparkAllPartitions(ctx); err != nil {
			return fmt.Errorf("docket: unparking partitions: %w", err)
		}
	}
	return nil
}
