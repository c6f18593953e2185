package docket

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/docketrun/docket-go/db"
	"github.com/docketrun/docket-go/internal/dbgen"
	"github.com/docketrun/docket-go/policy"
)

// undefinedTable is SQLSTATE 42P01: the schema keeps no Docket ledger.
const undefinedTable = "42P01"

// verifySchema requires the shape of the newest embedded migration in the
// schema the search_path resolves to, however it was applied (docket
// migrate, the app's own migration tool, psql): every Docket column, one
// claim function with the fixed six-argument identity, every Docket
// function with the body this binary embeds, and the singleton policy row.
// When Docket's ledger exists it must hold exactly the embedded versions.
// It only reads.
func verifySchema(ctx context.Context, q *dbgen.Queries) error {
	shape, err := q.SchemaShape(ctx)
	if err != nil {
		return fmt.Errorf("docket: reading schema shape: %w", err)
	}
	if shape.SchemaName == "" {
		return fmt.Errorf("%w: the search_path %q names no schema this role can use (none exists, or the role lacks USAGE on it)",
			ErrSchemaMismatch, shape.SearchPath)
	}
	where := fmt.Sprintf("in schema %q (search_path %q)", shape.SchemaName, shape.SearchPath)
	if err := verifyLedger(ctx, q, where); err != nil {
		return err
	}
	missing, err := q.MissingColumns(ctx, requiredColumns())
	if err != nil {
		return fmt.Errorf("docket: reading schema shape: %w", err)
	}
	if len(missing) == len(db.Columns) {
		return fmt.Errorf("%w: no Docket tables %s", ErrSchemaMismatch, where)
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %s: %s", ErrSchemaMismatch, where, strings.Join(missing, ", "))
	}
	if shape.ClaimFunctionCount != 1 || shape.ClaimFunctionExactCount != 1 {
		return fmt.Errorf("%w: want exactly one six-argument docket_tenant_fair_claim %s, found %d function(s), %d with that identity",
			ErrSchemaMismatch, where, shape.ClaimFunctionCount, shape.ClaimFunctionExactCount)
	}
	if err := verifyFunctions(ctx, q); err != nil {
		return err
	}
	// Both engines lock the singleton; without it nothing could be admitted.
	if _, err := q.GetClaimPolicy(ctx); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: the docket_claim_policy singleton row is missing %s", ErrSchemaMismatch, where)
		}
		return fmt.Errorf("docket: reading claim policy: %w", err)
	}
	return nil
}

// verifyLedger compares Docket's ledger, when the schema keeps one, with the
// embedded migrations. A schema without it (applied by another tool) is
// judged by its shape alone.
func verifyLedger(ctx context.Context, q *dbgen.Queries, where string) error {
	applied, err := q.LedgerVersions(ctx)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == undefinedTable {
		return nil
	}
	if err != nil {
		return fmt.Errorf("docket: reading docket_schema_migrations: %w", err)
	}
	want, err := embeddedVersions()
	if err != nil {
		return err
	}
	if !slices.Equal(applied, want) {
		return fmt.Errorf("%w: applied migrations %v %s, want %v", ErrSchemaMismatch, applied, where, want)
	}
	return nil
}

// requiredColumns lists db.Columns as "table.column".
func requiredColumns() []string {
	out := make([]string, len(db.Columns))
	for i, c := range db.Columns {
		out[i] = c.Table + "." + c.Name
	}
	return out
}

// synchronizePolicy persists the configured engine in the singleton policy
// row, in one transaction that holds the row lock, so concurrent starts of
// one homogeneous configuration serialize and converge to one write.
// TenantFair: the first start initializes the default; a changed configured
// cap overwrites it; an unchanged one writes nothing, so a runtime default
// change survives restarts. Overrides are never touched.
//
// A start that makes the domain walk parked (a changed configured
// ParkDormant turned on, or a switch from Legacy to a domain that parks)
// then parks every dormant partition, after the commit, as
// PutClaimPolicyParking(on) does.
func (c *Client) synchronizePolicy(ctx context.Context) error {
	var before dbgen.DocketClaimPolicy
	err := c.inTx(ctx, func(q *dbgen.Queries) error {
		row, err := q.LockClaimPolicy(ctx)
		if err != nil {
			return fmt.Errorf("docket: locking claim policy: %w", err)
		}
		before = row
		return c.engine.synchronize(ctx, q, row)
	})
	if err != nil {
		return err
	}
	if startsParking(before, c.engine) {
		c.parkDormantPartitions(ctx)
	}
	return nil
}

// startsParking reports whether synchronizing e over the policy row before
// turns the parked walk on: before, the domain did not walk parked, and the
// synchronized TenantFair engine leaves park_dormant on.
func startsParking(before dbgen.DocketClaimPolicy, e engine) bool {
	p, ok := e.configured.(policy.TenantFair)
	if !ok {
		return false
	}
	wasParking := before.AdmissionMode == p.Name() && before.ParkDormant
	parking := before.ParkDormant
	if before.ConfiguredParkDormant != p.ParkDormant {
		parking = p.ParkDormant
	}
	return parking && !wasParking
}

// synchronizeLegacy selects the Legacy engine. It leaves the persisted
// default and every marker alone: Legacy never reads or creates markers, and
// lifecycle writes keep clearing them as usual.
func synchronizeLegacy(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy) error {
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
func synchronizeTenantFair(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy, engine policy.TenantFair) error {
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
func synchronizeParkDormant(ctx context.Context, q *dbgen.Queries, row dbgen.DocketClaimPolicy, configured bool) error {
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

// SchemaVersion is the version of the newest migration this binary embeds:
// the schema version Open requires.
func SchemaVersion() (string, error) {
	versions, err := embeddedVersions()
	if err != nil {
		return "", err
	}
	if len(versions) == 0 {
		return "", fmt.Errorf("docket: the binary embeds no migration")
	}
	return versions[len(versions)-1], nil
}
