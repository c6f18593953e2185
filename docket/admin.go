package docket

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketrun/docket-go/internal/dbgen"
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
	if _, err := verifySchema(ctx, st.queries); err != nil {
		return nil, err
	}
	return &Admin{store: st}, nil
}

// ClaimPolicyWriteOptions configures one claim-policy write.
type ClaimPolicyWriteOptions struct {
	// ExpectedVersion, when set, makes the write a compare-and-set: it
	// applies only if the current version equals it, and otherwise fails with
	// a *StaleVersionError (errors.Is ErrStale) and writes nothing. A scope
	// that has no partition yet is at version 0.
	ExpectedVersion *int64
}

// StaleVersionError reports a compare-and-set write that expected another
// version than the current one; nothing was written. It matches ErrStale.
type StaleVersionError struct {
	// Expected is the version the caller expected.
	Expected int64
	// Current is the version found under the row lock.
	Current int64
}

func (e *StaleVersionError) Error() string {
	return fmt.Sprintf("docket: stale version: expected %d, current %d", e.Expected, e.Current)
}

// Is makes errors.Is(err, ErrStale) hold.
func (e *StaleVersionError) Is(target error) bool { return target == ErrStale }

// validate rejects a negative expected version, which could never match.
func (o ClaimPolicyWriteOptions) validate() error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion < 0 {
		return invalidArgument("expected version %d is negative", *o.ExpectedVersion)
	}
	return nil
}

// check compares the current version with the expected one, if any.
func (o ClaimPolicyWriteOptions) check(current int64) error {
	if o.ExpectedVersion != nil && *o.ExpectedVersion != current {
		return &StaleVersionError{Expected: *o.ExpectedVersion, Current: current}
	}
	return nil
}

// checkedCap validates a cap argument and converts it for the database.
func checkedCap(maxActiveRuns int) (int32, error) {
	if err := validateCap(maxActiveRuns); err != nil {
		return 0, fmt.Errorf("%w: got %d", err, maxActiveRuns)
	}
	return int32(maxActiveRuns), nil
}

// DomainOverview is one operator's view of a fairness domain: its policy,
// cursor and ring sizes, its runs by status and its recent activity. The
// parts are read one after another, not as one snapshot.
type DomainOverview struct {
	// Policy is the singleton claim policy.
	Policy ClaimPolicyDefault
	// Cursor is the ring position the last committed TenantFair call visited
	// last (0 before any visit); the next call starts after it.
	Cursor int64
	// Partitions counts every partition, each with its ring position.
	Partitions int64
	// RingSize counts the positions that own unfinished work.
	RingSize int64
	// Parked counts parked partitions.
	Parked int64
	// RunsByStatus counts the runs of each status present.
	RunsByStatus map[RunStatus]int64
	// RunsByPhase counts the runs of each phase present, at the database
	// clock of the same read as RunsByStatus.
	RunsByPhase map[RunPhase]int64
	// Activity holds one entry per minute of the last 15, oldest first, the
	// current minute last.
	Activity []MinuteActivity
}

// MinuteActivity counts what docket_runs still records of one minute: it
// keeps only each run's latest times, so earlier claims of a run are gone.
type MinuteActivity struct {
	// Minute is the start of the minute.
	Minute time.Time
	// Claimed counts claims still held that were taken in the minute.
	Claimed int64
	// Finished counts runs that finished in the minute.
	Finished int64
	// Updated counts runs whose latest write fell in the minute.
	Updated int64
}

// DomainOverview reads the domain's policy, cursor, ring and parked sizes,
// runs by status and by phase and the last 15 minutes of activity. The
// counts (one statement for both) and the activity each scan docket_runs
// once: operator tooling, not a hot path.
func (c *store) DomainOverview(ctx context.Context) (DomainOverview, error) {
	return timed(ctx, c.telemetry, opDomainOverview, func() (DomainOverview, error) {
		policyRow, err := c.queries.GetClaimPolicy(ctx)
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: reading claim policy: %w", err)
		}
		summary, err := c.queries.ConsoleDomainSummary(ctx)
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: reading domain summary: %w", err)
		}
		counts, err := c.queries.ConsoleRunPhaseCounts(ctx, dbgen.ConsoleRunPhaseCountsParams{})
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: counting runs by status and phase: %w", err)
		}
		activity, err := c.queries.ConsoleActivity(ctx)
		if err != nil {
			return DomainOverview{}, fmt.Errorf("docket: reading activity: %w", err)
		}
		out := DomainOverview{
			Policy:       claimPolicyDefaultOf(policyRow),
			Cursor:       summary.ScanRingPosition,
			Partitions:   summary.Partitions,
			RingSize:     summary.RingSize,
			Parked:       summary.Parked,
			RunsByStatus: map[RunStatus]int64{},
			RunsByPhase:  map[RunPhase]int64{},
			Activity:     make([]MinuteActivity, len(activity)),
		}
		for _, n := range counts {
			out.RunsByStatus[RunStatus(n.Status)] += n.Runs
			out.RunsByPhase[RunPhase(n.Phase)] += n.Runs
		}
		for i, m := range activity {
			out.Activity[i] = MinuteActivity{Minute: m.Minute, Claimed: m.Claimed, Finished: m.Finished, Updated: m.Updated}
		}
		return out, nil
	})
}

// CapSource says where a scope's effective cap comes from.
type CapSource string

const (
	// CapFromDefault means the scope inherits the policy default.
	CapFromDefault CapSource = "default"
	// CapFromOverride means the scope has its own override.
	CapFromOverride CapSource = "override"
)

// ClaimPolicyInspection is one consistent, token-free view of a scope's
// effective claim policy and admission state.
type ClaimPolicyInspection struct {
	// Scope is the inspected owner.
	Scope Scope
	// AdmissionMode is the active engine: "legacy" or "tenant_fair".
	AdmissionMode string
	// EffectiveMaxActiveRuns is the override if set, else the default.
	EffectiveMaxActiveRuns int
	// Source says which of the two EffectiveMaxActiveRuns is.
	Source CapSource
	// PolicyVersion is the version of the policy default.
	PolicyVersion int64
	// PartitionVersion is the scope's override version; 0 without a partition.
	PartitionVersion int64
	// AdmissionEpoch counts the scope's committed nonempty grants.
	AdmissionEpoch int64
	// RingPosition is the scope's immutable ring position; 0 without a partition.
	RingPosition int64
	// Unfinished is the exact count of the scope's running and waiting runs.
	Unfinished int64
	// ParkDormant reports whether the domain walks only its awake ring.
	ParkDormant bool
	// Parked reports whether the scope's partition is parked: calls skip it
	// until ParkedUntil, or until a write wakes it.
	Parked bool
	// ParkedUntil is the time a parked partition wakes; nil when it is not
	// parked or parked until a write (nothing of it is scheduled).
	ParkedUntil *time.Time
	// Paused reports whether an operator paused the scope (PauseTenant):
	// TenantFair admits and leases none of its runs until it is resumed.
	Paused bool
	// Queued counts healthy running rows that are due, unclaimed and unadmitted.
	Queued int64
	// AdmittedReady counts healthy running rows that are due, unclaimed and admitted.
	AdmittedReady int64
	// AdmittedClaimed counts healthy running rows that are claimed and admitted.
	AdmittedClaimed int64
	// Admitted counts every admitted identity (healthy running with a marker).
	Admitted int64
	// Debt is max(Admitted - EffectiveMaxActiveRuns, 0): admissions over the
	// cap that block queued promotion until they finish.
	Debt int64
	// Rate is the scope's effective admission rate: its own, else the
	// domain's default unless it is exempt; zero when it has none.
	Rate RateLimit
	// RateSource says where Rate comes from.
	RateSource RateSource
	// RateTokens is how many promotions Rate allows at once now (at most
	// Rate.Burst + 1); 0 without a rate.
	RateTokens int
	// NextAdmissionAt is when Rate's next token comes while RateTokens is
	// 0; nil otherwise.
	NextAdmissionAt *time.Time
}

// InspectClaimPolicy returns the effective cap of scope, its source and
// versions, its epoch and ring membership, and its admission counts, all from
// one snapshot ("due" means wake_at at or before the database's now). A scope
// that never had a partition reads as version 0 with no ring position. A scope
// with no override in a domain whose policy was never initialized has no
// effective cap: ErrNotInitialized.
func (c *store) InspectClaimPolicy(ctx context.Context, scope Scope) (ClaimPolicyInspection, error) {
	return timed(ctx, c.telemetry, opInspectClaimPolicy, func() (ClaimPolicyInspection, error) {
		out, err := c.inspectScope(ctx, scope)
		if err != nil {
			return ClaimPolicyInspection{}, err
		}
		if out.Source == "" {
			return ClaimPolicyInspection{}, fmt.Errorf("%w: %s has no override and the policy has no default", ErrNotInitialized, scope)
		}
		return out, nil
	})
}

// inspectScope reads what InspectClaimPolicy returns, except that a scope
// without an effective cap (no override, no initialized default) reads with
// EffectiveMaxActiveRuns 0, an empty Source and no debt instead of failing.
func (c *store) inspectScope(ctx context.Context, scope Scope) (ClaimPolicyInspection, error) {
	key, err := c.scopeKey(scope)
	if err != nil {
		return ClaimPolicyInspection{}, err
	}
	row, err := c.queries.InspectClaimScope(ctx, key)
	if err != nil {
		return ClaimPolicyInspection{}, fmt.Errorf("docket: inspecting claim policy: %w", err)
	}
	out := ClaimPolicyInspection{
		Scope:            scope,
		AdmissionMode:    row.AdmissionMode,
		PolicyVersion:    row.PolicyVersion,
		PartitionVersion: row.PartitionVersion,
		AdmissionEpoch:   row.AdmissionEpoch,
		Unfinished:       row.UnfinishedCount,
		ParkDormant:      row.ParkDormant,
		Parked:           row.Parked,
		ParkedUntil:      row.ParkedUntil,
		Paused:           row.Paused,
		Queued:           row.Queued,
		AdmittedReady:    row.AdmittedReady,
		AdmittedClaimed:  row.AdmittedClaimed,
		Admitted:         row.Admitted,
	}
	if row.RingPosition != nil {
		out.RingPosition = *row.RingPosition
	}
	switch {
	case row.OverrideRateLimit != nil:
		out.Rate, out.RateSource = rateOf(row.OverrideRateLimit, row.OverrideRatePeriod, row.OverrideRateBurst), RateFromOverride
	case row.RateUnlimited:
		out.RateSource = RateExempt
	case row.DefaultRateLimit != nil:
		out.Rate, out.RateSource = rateOf(row.DefaultRateLimit, row.DefaultRatePeriod, row.DefaultRateBurst), RateFromDefault
	}
	out.RateTokens, out.NextAdmissionAt = out.Rate.tokensAt(row.RateTat, row.ObservedAt)
	switch {
	case row.OverrideMaxActive != nil:
		out.EffectiveMaxActiveRuns, out.Source = int(*row.OverrideMaxActive), CapFromOverride
	case row.DefaultMaxActive != nil:
		out.EffectiveMaxActiveRuns, out.Source = int(*row.DefaultMaxActive), CapFromDefault
	default:
		return out, nil
	}
	out.Debt = max(out.Admitted-int64(out.EffectiveMaxActiveRuns), 0)
	return out, nil
}
