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
