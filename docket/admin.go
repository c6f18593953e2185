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
// persisted default. A started Client offers the same methods.
type Admin struct {
	client *Client
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

// NewAdmin verifies that pool's schema is at the embedded version with the validated shape
// (ErrSchemaMismatch otherwise) and returns the administration facade. It
// writes nothing.
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
	client := newClient(pool, Config{TenantMode: cfg.TenantMode, Schema: cfg.Schema}, tel)
	if err := verifySchema(ctx, client.queries); err != nil {
		return nil, err
	}
	return &Admin{client: client}, nil
}

// FetchClaimPolicyDefault returns the singleton policy; see
// Client.FetchClaimPolicyDefault.
func (a *Admin) FetchClaimPolicyDefault(ctx context.Context) (ClaimPolicyDefault, error) {
	return a.client.FetchClaimPolicyDefault(ctx)
}

// PutClaimPolicyDefault changes the persisted default cap; see
// Client.PutClaimPolicyDefault.
func (a *Admin) PutClaimPolicyDefault(ctx context.Context, maxActiveRuns int, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return a.client.PutClaimPolicyDefault(ctx, maxActiveRuns, opts)
}

// PutClaimPolicyParking turns parked partitions on or off at runtime; see
// Client.PutClaimPolicyParking.
func (a *Admin) PutClaimPolicyParking(ctx context.Context, parkDormant bool, opts ClaimPolicyWriteOptions) (ClaimPolicyDefault, error) {
	return a.client.PutClaimPolicyParking(ctx, parkDormant, opts)
}

// PutClaimPolicyOverride sets a scope's cap override; see
// Client.PutClaimPolicyOverride.
func (a *Admin) PutClaimPolicyOverride(ctx context.Context, scope Scope, maxActiveRuns int, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	return a.client.PutClaimPolicyOverride(ctx, scope, maxActiveRuns, opts)
}

// ResetClaimPolicyOverride removes a scope's cap override; see
// Client.ResetClaimPolicyOverride.
func (a *Admin) ResetClaimPolicyOverride(ctx context.Context, scope Scope, opts ClaimPolicyWriteOptions) (ClaimPolicyOverride, error) {
	return a.client.ResetClaimPolicyOverride(ctx, scope, opts)
}

// InspectClaimPolicy returns a scope's effective policy and admission
// counts; see Client.InspectClaimPolicy.
func (a *Admin) InspectClaimPolicy(ctx context.Context, scope Scope) (ClaimPolicyInspection, error) {
	return a.client.InspectClaimPolicy(ctx, scope)
}
