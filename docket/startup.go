package docket

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/gen"
	"github.com/docketrun/docket-go/policy"
)

// verifySchema requires exactly the embedded migrations (schema version 2)
// plus the validated shape: the marker column and one claim function with the
// fixed six-argument identity.
func (c *Client) verifySchema(ctx context.Context) error {
	want, err := embeddedVersions()
	if err != nil {
		return err
	}
	applied, err := c.queries.AppliedMigrationVersions(ctx)
	if err != nil {
		return fmt.Errorf("%w: reading schema_migrations: %w", ErrSchemaMismatch, err)
	}
	if !slices.Equal(applied, want) {
		return fmt.Errorf("%w: applied migrations %v, want %v", ErrSchemaMismatch, applied, want)
	}
	shape, err := c.queries.SchemaShape(ctx)
	if err != nil {
		return fmt.Errorf("%w: reading schema shape: %w", ErrSchemaMismatch, err)
	}
	if !shape.HasMarkerColumn {
		return fmt.Errorf("%w: docket_runs.tenant_admitted_at is missing", ErrSchemaMismatch)
	}
	if shape.ClaimFunctionCount != 1 || shape.ClaimFunctionExactCount != 1 {
		return fmt.Errorf("%w: want exactly one six-argument docket_tenant_fair_claim, found %d function(s), %d with that identity",
			ErrSchemaMismatch, shape.ClaimFunctionCount, shape.ClaimFunctionExactCount)
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
// row. TenantFair: the first start initializes the default; a changed
// configured cap overwrites it; an unchanged one writes nothing, so a runtime
// default change survives restarts. Overrides are never touched.
func (c *Client) synchronizePolicy(ctx context.Context) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		q := c.queries.WithTx(tx)
		row, err := q.LockClaimPolicy(ctx)
		if err != nil {
			return fmt.Errorf("docket: locking claim policy: %w", err)
		}
		switch engine := c.engine.(type) {
		case policy.TenantFair:
			return synchronizeTenantFair(ctx, q, row, engine)
		default:
			if row.AdmissionMode == "legacy" {
				return nil
			}
			if _, err := q.SetAdmissionMode(ctx, "legacy"); err != nil {
				return fmt.Errorf("docket: selecting legacy admission: %w", err)
			}
			return nil
		}
	})
}

func synchronizeTenantFair(ctx context.Context, q *gen.Queries, row gen.DocketClaimPolicy, engine policy.TenantFair) error {
	if row.AdmissionMode != "tenant_fair" {
		// Claims taken under Legacy become admissions, or an expired one
		// could never be recovered by TenantFair's admitted-only expired page.
		if _, err := q.MarkLegacyClaimsAdmitted(ctx); err != nil {
			return fmt.Errorf("docket: adopting legacy claims: %w", err)
		}
	}
	configured := int32(engine.DefaultMaxActiveRuns)
	if row.ConfiguredMaxActive == nil || *row.ConfiguredMaxActive != configured || row.MaxActive == nil {
		if _, err := q.InitializeClaimPolicy(ctx, &configured); err != nil {
			return fmt.Errorf("docket: initializing claim policy: %w", err)
		}
		return nil
	}
	if row.AdmissionMode != "tenant_fair" {
		if _, err := q.SetAdmissionMode(ctx, "tenant_fair"); err != nil {
			return fmt.Errorf("docket: selecting tenant_fair admission: %w", err)
		}
	}
	return nil
}
