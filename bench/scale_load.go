package main

import (
	"context"
	"time"
)

// Set-based loaders for the scale scenario. They insert through
// docket_runs, so its triggers create every partition and keep the
// unfinished ring exact, exactly as the batch insert would, only faster.

// loadDueRuns inserts n runs due now over the tenants named by tenantSQL (a
// SQL expression of the series value g), oldest first.
func loadDueRuns(ctx context.Context, env *docketEnv, n int, tenantSQL string, now time.Time) error {
	return env.exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select 'r' || g, `+tenantSQL+`, 'bench', 'v1', 'running', '{}',
		       $2::timestamptz - make_interval(secs => ($1::integer - g) / 1000000.0)
		  from generate_series(1, $1::integer) g`, n, now)
}

// loadHistory inserts n done runs over tenants, as finished history that
// no claim can select.
func loadHistory(ctx context.Context, env *docketEnv, n, tenants int) error {
	return env.exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, finished_at)
		select 'h' || g, 't' || lpad((g % $2::integer)::text, 3, '0'), 'bench', 'v1', 'done', '{}', now()
		  from generate_series(1, $1::integer) g`, n, tenants)
}

// loadFuture inserts one run due in a day for each of partitions tenants
// named p000000, p000001, ...; one statement, so the partitions take ring
// positions in name order.
func loadFuture(ctx context.Context, env *docketEnv, partitions int, now time.Time) error {
	return env.exec(ctx, `insert into docket_runs (run_id, tenant_id, graph_id, graph_hash, status, state, wake_at)
		select 'f' || g, 'p' || lpad(g::text, 6, '0'), 'bench', 'v1', 'running', '{}', $2::timestamptz + interval '1 day'
		  from generate_series(0, $1::integer - 1) g`, partitions, now)
}
