package docket

import (
	"errors"
	"log/slog"
	"regexp"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketrun/docket-go/policy"
)

// ErrInvalidSchemaName reports a schema name that Open (Config.Schema) and a Migrator refuse.
var ErrInvalidSchemaName = errors.New("docket: invalid schema name")

// schemaNamePattern keeps schema names to plain identifiers: a search_path
// lists schemas separated by commas and the name lands in DDL.
var schemaNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// TenantMode says whether runs must name a tenant.
type TenantMode int

const (
	// TenantNone allows tenantless runs; the omitted policy is Legacy.
	TenantNone TenantMode = iota
	// TenantRequired rejects tenantless runs and requires TenantFair.
	TenantRequired
)

// String returns "none" or "required".
func (m TenantMode) String() string {
	switch m {
	case TenantNone:
		return "none"
	case TenantRequired:
		return "required"
	}
	return "invalid"
}

// Config configures a Client. Open validates it before any database access.
type Config struct {
	// TenantMode is TenantNone (default) or TenantRequired.
	TenantMode TenantMode
	// ClaimPolicy is policy.Legacy{} or policy.TenantFair{...}. Nil means
	// Legacy, which is allowed only with TenantNone.
	ClaimPolicy policy.ClaimPolicy
	// MeterProvider receives identity-free metrics; nil disables them.
	MeterProvider metric.MeterProvider
	// TracerProvider receives the docket.insert, docket.claim,
	// docket.handler and docket.commit spans (see docs/telemetry.md); nil
	// starts no span. Inserts store the trace context of the inserting
	// context's span either way, so a handler span can link to it.
	TracerProvider trace.TracerProvider
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Schema names the schema (the fairness domain) Docket's tables live in.
	// Every statement Docket sends, on the pool or in the app's own
	// transaction, then runs with search_path set to it for that statement
	// only, in the same round trip, so the app's pool keeps its own
	// search_path. Empty means whatever the pool's search_path resolves to.
	Schema string
	// Tuning holds the client's performance trade-offs, apart from the
	// settings above; its zero value is right for most apps.
	Tuning ClientTuning
}

// ClientTuning is the one place for a Client's performance trade-offs, kept
// apart from what configures its behaviour.
type ClientTuning struct {
	// AsyncClaimCommit makes ClaimDue and the Worker run each claim with
	// synchronous_commit off for that claim's own transaction only (the
	// Worker's also holds the read of its leases); ClaimDueTx and the trace
	// calls are never affected.
	// It raises claim throughput on a durable server, since a claim no longer
	// waits for its WAL flush (for TenantFair, inside its serialized section).
	// The price is that a crash can lose the latest claims: their runs become
	// claimable again at once, and their holders cannot commit, because every
	// write is fenced by the lost claim token. False (the default) keeps the
	// session's setting; see docs/performance.md, "synchronous_commit".
	AsyncClaimCommit bool
}

// validate checks the configuration and returns the resolved engine.
func (c Config) validate() (engine, error) {
	if err := validateSchemaName(c.Schema); err != nil {
		return engine{}, err
	}
	if c.TenantMode != TenantNone && c.TenantMode != TenantRequired {
		return engine{}, invalidConfig("tenant mode %d is neither TenantNone nor TenantRequired", int(c.TenantMode))
	}
	return c.resolveEngine()
}

// resolveEngine resolves Config.ClaimPolicy to its engine. It is the only
// place that names the closed set of engines: an engine of any other type,
// even one embedding Legacy or TenantFair, is refused.
func (c Config) resolveEngine() (engine, error) {
	switch p := c.ClaimPolicy.(type) {
	case nil:
		if c.TenantMode == TenantRequired {
			return engine{}, invalidConfig("required tenancy needs policy.TenantFair with an explicit DefaultMaxActiveRuns")
		}
		return legacyEngine(), nil
	case policy.Legacy, *policy.Legacy:
		if c.TenantMode == TenantRequired {
			return engine{}, invalidConfig("required tenancy rejects the tenant-blind Legacy policy")
		}
		return legacyEngine(), nil
	case policy.TenantFair:
		return validTenantFair(p)
	case *policy.TenantFair:
		if p == nil {
			return engine{}, invalidConfig("nil *policy.TenantFair")
		}
		return validTenantFair(*p)
	default:
		return engine{}, invalidConfig("unsupported claim policy %T", c.ClaimPolicy)
	}
}

// validTenantFair requires an explicit default cap in 1..MaxCap; the zero
// value (an omitted cap) is rejected like any other out-of-range value.
func validTenantFair(p policy.TenantFair) (engine, error) {
	if err := validateCap(p.DefaultMaxActiveRuns); err != nil {
		return engine{}, invalidConfig("TenantFair.DefaultMaxActiveRuns %d: %w", p.DefaultMaxActiveRuns, err)
	}
	return tenantFairEngine(p), nil
}

// validateCap checks a cap for the policy default or an override.
func validateCap(v int) error {
	if v < 1 || v > MaxCap {
		return ErrInvalidCap
	}
	return nil
}

// validateSchemaName refuses a Config.Schema that is not a plain identifier.
func validateSchemaName(schema string) error {
	if schema != "" && !schemaNamePattern.MatchString(schema) {
		return invalidConfig("schema %q is not a plain identifier", schema)
	}
	return nil
}
