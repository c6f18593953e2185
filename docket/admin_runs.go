package docket

import "context"

// RetryRun sends a failed or cancelled run back to work; see
// Client.RetryRun.
func (a *Admin) RetryRun(ctx context.Context, scope Scope, runID string, opts RetryRunOptions) (Run, error) {
	return a.client.RetryRun(ctx, scope, runID, opts)
}

// DeleteFinishedRuns deletes finished runs before a cutoff in batches; see
// Client.DeleteFinishedRuns.
func (a *Admin) DeleteFinishedRuns(ctx context.Context, opts DeleteFinishedRunsOptions) (int64, error) {
	return a.client.DeleteFinishedRuns(ctx, opts)
}

// FetchRun returns the public view of a run; see Client.FetchRun.
func (a *Admin) FetchRun(ctx context.Context, scope Scope, runID string) (Run, error) {
	return a.client.FetchRun(ctx, scope, runID)
}

// InspectRun returns the scheduling view of a run; see Client.InspectRun.
func (a *Admin) InspectRun(ctx context.Context, scope Scope, runID string) (RunInspection, error) {
	return a.client.InspectRun(ctx, scope, runID)
}

// ListRuns returns one page of a scope's runs; see Client.ListRuns.
func (a *Admin) ListRuns(ctx context.Context, req ListRunsRequest) (RunPage, error) {
	return a.client.ListRuns(ctx, req)
}

// ListDomainRuns returns one page of the runs of every scope; see
// Client.ListDomainRuns.
func (a *Admin) ListDomainRuns(ctx context.Context, req ListDomainRunsRequest) (RunPage, error) {
	return a.client.ListDomainRuns(ctx, req)
}

// ListTenants returns one page of the domain's partitions; see
// Client.ListTenants.
func (a *Admin) ListTenants(ctx context.Context, req ListTenantsRequest) (TenantPage, error) {
	return a.client.ListTenants(ctx, req)
}

// MutateRun serializes a read-decide-write of an unclaimed transition; see
// Client.MutateRun.
func (a *Admin) MutateRun(ctx context.Context, scope Scope, runID string, decide func(Run) (Mutation, error)) (MutateResult, error) {
	return a.client.MutateRun(ctx, scope, runID, decide)
}

// RetryPoisonedRun revives a poisoned run; see Client.RetryPoisonedRun.
func (a *Admin) RetryPoisonedRun(ctx context.Context, scope Scope, runID string) (Run, error) {
	return a.client.RetryPoisonedRun(ctx, scope, runID)
}
