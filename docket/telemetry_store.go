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

// storeCall times one store operation. Start it first thing and defer its
// end with the operation's named error result:
//
//	defer c.telemetry.storeCall(opCommit).end(ctx, &err)
type storeCall struct {
	t     *telemetry
	op    string
	start time.Time
	stale bool
}

// storeCall starts timing operation op.
func (t *telemetry) storeCall(op string) *storeCall {
	return &storeCall{t: t, op: op, start: time.Now()}
}

// markStale classifies a call that returns no error as stale: the holder's
// fence no longer matched, so nothing changed.
func (s *storeCall) markStale() { s.stale = true }

// end records the call's duration with the result *err classifies.
func (s *storeCall) end(ctx context.Context, err *error) {
	s.t.storeDuration.Record(ctx, time.Since(s.start).Seconds(), metric.WithAttributes(
		attrOperation.String(s.op), attrResult.String(storeResult(*err, s.stale))))
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
