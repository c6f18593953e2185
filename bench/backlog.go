package main

import (
	"context"
	"fmt"
	"time"
)

// tenantName is the name of tenant number t.
func tenantName(t int) string { return fmt.Sprintf("t%03d", t) }

// spreadTenants maps run r of a backlog round-robin over tenants.
func spreadTenants(tenants int) func(int) string {
	return func(r int) string { return tenantName(r % tenants) }
}

// seq returns the run numbers from..to-1.
func seq(from, to int) []int {
	runs := make([]int, 0, max(to-from, 0))
	for r := from; r < to; r++ {
		runs = append(runs, r)
	}
	return runs
}

// loadDocketBacklog inserts runs due now, round-robin over tenants, through
// the batch insert, then vacuums and analyzes so every engine starts from
// fresh statistics.
func loadDocketBacklog(ctx context.Context, env *docketEnv, runs, tenants int) error {
	if err := insertDocketRuns(ctx, env.client, seq(0, runs), spreadTenants(tenants), time.Time{}); err != nil {
		return fmt.Errorf("insert backlog: %w", err)
	}
	return env.exec(ctx, "vacuum analyze")
}

// loadRiverBacklog inserts runs as River jobs on the default queue, then
// vacuums and analyzes.
func loadRiverBacklog(ctx context.Context, env *riverEnv, runs, tenants int) error {
	if err := env.insert(ctx, seq(0, runs), spreadTenants(tenants)); err != nil {
		return fmt.Errorf("insert backlog: %w", err)
	}
	_, err := env.pool.Exec(ctx, "vacuum analyze")
	return err
}
