package docket

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// The operation attribute values of docket.store.duration.
const (
	opInsertRun                = "insert_run"
	opInsertRuns               = "insert_runs"
	opFetchRun                 = "fetch_run"
	opListRuns                 = "list_runs"
	opListDomainRuns           = "list_domain_runs"
	opInspectRun               = "inspect_run"
	opRefreshClaim             = "refresh_claim"
	opReleaseClaim             = "release_claim"
	opCommit                   = "commit"
	opAbandonClaim             = "abandon_claim"
	opMutateRun                = "mutate_run"
	opCancel                   = "cancel"
	opRetryPoisonedRun         = "retry_poisoned_run"
	opRetryRun                 = "retry_run"
	opDeleteFinishedRuns       = "delete_finished_runs"
	opFetchClaimPolicyDefault  = "fetch_claim_policy_default"
	opPutClaimPolicyDefault    = "put_claim_policy_default"
	opPutClaimPolicyParking    = "put_claim_policy_parking"
	opPutClaimPolicyOverride   = "put_claim_policy_override"
	opResetClaimPolicyOverride = "reset_claim_policy_override"
	opInspectClaimPolicy       = "inspect_claim_policy"
	opPauseTenant              = "pause_tenant"
	opResumeTenant             = "resume_tenant"
	opListTenants              = "list_tenants"
	opAddSchedule              = "add_schedule"
	opListSchedules            = "list_schedules"
	opFetchSchedule            = "fetch_schedule"
	opPauseSchedule            = "pause_schedule"
	opResumeSchedule           = "resume_schedule"
	opRemoveSchedule           = "remove_schedule"
	opTakeScheduleTicks        = "take_schedule_ticks"
	opBrowseTenants            = "browse_tenants"
	opInspectTenant            = "inspect_tenant"
	opDomainOverview           = "domain_overview"
	opRingWindow               = "ring_window"
	opCountRunPhases           = "count_run_phases"
)

// The result attribute values of docket.store.duration.
const (
	storeOK       = "ok"
	storeNotFound = "not_found"
	storeStale    = "stale"
	storeInvalid  = "invalid"
	storeError    = "error"
)

// timed runs f as store operation op and records its duration with the
// result f's error classifies. A store method's body is f:
//
//	func (c *store) FetchRun(ctx context.Context, scope Scope, runID string) (Run, error) {
//		return timed(ctx, c.telemetry, opFetchRun, func() (Run, error) {
//			...
//		})
//	}
func timed[T any](ctx context.Context, t *telemetry, op string, f func() (T, error)) (T, error) {
	return timedStale(ctx, t, op, func() (T, bool, error) {
		v, err := f()
		return v, false, err
	})
}

// timedStale is timed for an operation that can come back stale without an
// error: f reports stale when the holder's fence no longer matched, so
// nothing changed.
func timedStale[T any](ctx context.Context, t *telemetry, op string, f func() (T, bool, error)) (_ T, err error) {
	start := time.Now()
	var stale bool
	defer func() { t.recordStore(ctx, op, start, err, stale) }()
	var v T
	v, stale, err = f()
	return v, err
}

// timedErr is timed for an operation that returns only an error.
func timedErr(ctx context.Context, t *telemetry, op string, f func() error) error {
	_, err := timed(ctx, t, op, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

// recordStore records one call of operation op that began at start, with
// the result err and stale classify. timed calls it; so do the calls that
// time several operations with one statement.
func (t *telemetry) recordStore(ctx context.Context, op string, start time.Time, err error, stale bool) {
	t.storeDuration.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(
		attrOperation.String(op), attrResult.String(storeResult(err, stale))))
}

// storeResult classifies an operation's error into the bounded result set.
func storeResult(err error, stale bool) string {
	switch {
	case err == nil && stale:
		return storeStale
	case err == nil:
		return storeOK
	case errors.Is(err, ErrNotFound):
		return storeNotFound
	case errors.Is(err, ErrStale), errors.Is(err, ErrStaleFence), errors.Is(err, ErrClaimLost):
		return storeStale
	case errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrInvalidCap), errors.Is(err, ErrTenantRequired),
		errors.Is(err, ErrInvalidTransition), errors.Is(err, ErrDuplicateRun), errors.Is(err, ErrNotInitialized),
		errors.Is(err, ErrDuplicateSchedule):
		return storeInvalid
	}
	return storeError
}
