package docket

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric"
)

// Admin administers the claim policy of one fairness domain without starting
// an engine, lists and reads its runs and partitions, and signals, retries
// and deletes runs. Unlike Open it never synchronizes the policy row, so
// connecting operator tooling cannot switch the engine or overwrite the
// persisted default. It holds no engine; a started Client offers every one
// of its methods, which the two share.
type Admin struct {
	*store
}

// AdminConfig configures NewAdmin.
type AdminConfig struct {
	// TenantMode decides whether the tenantless scope may be addressed:
	// under TenantRequired it is refused with ErrTenantRequired.
	TenantMode TenantMode
	// MeterProvider receives the identity-free docket.store.duration metric
	// of the administration calls; nil disables it.
	MeterProvider metric.MeterProvider
	// Schema names the schema of the domain, as Config.Schema does.
	Schema string
}

// NewAdmin verifies that pool's schema is at the binary's newest migration
// with the validated shape (ErrSchemaMismatch otherwise) and returns the
// administration facade. It writes nothing.
func NewAdmin(ctx context.Context, pool *pgxpool.Pool, cfg AdminConfig) (*Admin, error) {
	if cfg.TenantMode != TenantNone && cfg.TenantMode != TenantRequired {
		return nil, invalidConfig("tenant mode %d is neither TenantNone nor TenantRequired", int(cfg.TenantMode))
	}
	if pool == nil {
		return nil, invalidConfig("nil pool")
	}
	if err := validateSchemaName(cfg.Schema); err != nil {
		return nil, err
	}
	tel, err := newTelemetry(cfg.MeterProvider)
	if err != nil {
		return nil, err
	}
	st := newStore(pool, cfg.TenantMode, cfg.Schema, nil, tel)
	if err := verifySchema(ctx, st.queries); err != nil {
		return nil, err
	}
	return &Admin{store: st}, nil
}
