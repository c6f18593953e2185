package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Profile settings.
const (
	profileWarmCalls = 50
	profileTopN      = 25
)

// runProfile profiles TenantFair: pg_stat_statements (track = all, so the
// statements inside the claim function are counted one by one) over the
// claim ceiling's single-claimer loop and over a Worker drain, and
// auto_explain (analyze, buffers, nested statements) of single claim calls.
// The report goes to o.profile.
func runProfile(ctx context.Context, c *cluster, o options, p *progress) error {
	var report strings.Builder
	sz := o.sizes
	fmt.Fprintf(&report, "TenantFair profile: PostgreSQL %s, pg_stat_statements.track = all\n", c.srv.FullVersion())

	for _, shape := range []struct{ claimers, demand int }{{1, ceilingDemand}, {1, 1}, {contentionClaimers, contentionDemand}} {
		p.logf("profile: claim loop, %d claimers, demand %d, %d runs over %d tenants", shape.claimers, shape.demand, sz.CeilingRuns, sz.CeilingTenants)
		if err := profileClaims(ctx, c, sz, shape.claimers, shape.demand, &report); err != nil {
			return fmt.Errorf("claim loop: %w", err)
		}
	}
	p.logf("profile: Worker drain of %d no-op runs", sz.DrainRuns)
	if err := profileDrain(ctx, c, sz, p, &report); err != nil {
		return fmt.Errorf("drain: %w", err)
	}
	p.logf("profile: Worker drain of the fairness backlog (hot tenant at its cap)")
	if err := profileCapped(ctx, c, sz, p, &report); err != nil {
		return fmt.Errorf("capped drain: %w", err)
	}
	p.logf("profile: fleet drains (TenantFair, Legacy, River)")
	if err := profileFleet(ctx, c, o, p, &report); err != nil {
		return fmt.Errorf("fleet: %w", err)
	}
	p.logf("profile: explained claim calls")
	if err := profileExplain(ctx, c, sz.CeilingRuns, sz.CeilingTenants, profileWarmCalls, []int{ceilingDemand, 1}, &report); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	// One tenant whose head has seen many promotions: dead entries of
	// promoted runs stay at the head of its queued index until vacuum.
	if err := profileExplain(ctx, c, sz.CeilingRuns/10, 1, profileWarmCalls*2, []int{ceilingDemand}, &report); err != nil {
		return fmt.Errorf("explain one tenant: %w", err)
	}
	if err := os.WriteFile(o.profile, []byte(report.String()), 0o644); err != nil {
		return err
	}
	p.logf("wrote %s", o.profile)
	return nil
}

// profileClaims runs claimers concurrent claim loops of demand on the
// ceiling's backlog and reports the top statements.
func profileClaims(ctx context.Context, c *cluster, sz sizes, claimers, demand int, report *strings.Builder) (err error) {
	env, err := openDocket(ctx, c, engineTenantFair, uncappedCap, claimers+2)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	if err := loadDocketBacklog(ctx, env, sz.CeilingRuns, sz.CeilingTenants); err != nil {
		return err
	}
	if err := resetStatements(ctx, env); err != nil {
		return err
	}
	claims := make([]claimFunc, claimers)
	for i := range claims {
		claims[i] = docketClaim(env.client, demand)
	}
	res, err := runClaimLoops(ctx, c.cpu(), claims, sz.CeilingRuns, sz.CeilingBudget)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "\n== Claim loop: %d claimers, demand %d, %d runs over %d tenants: %d calls, %.0f claims/s, p50 %.2f ms p99 %.2f ms ==\n",
		claimers, demand, sz.CeilingRuns, sz.CeilingTenants, len(res.Calls), res.claimsPerSecond(), summarize(res.Calls).P50Ms, summarize(res.Calls).P99Ms)
	if err := serializedSection(ctx, env, res, report); err != nil {
		return err
	}
	return topStatements(ctx, env, report)
}

// serializedSection splits the time between two walks of a loop: walks
// serialize on the policy row, so the loop's elapsed time over its walks is
// the cycle of one walk. A walk is one engine call, whether a claimer made
// it (ClaimDueTx) or a combined call made it for itself and the
// waiters it served: every statement that calls docket_tenant_fair_claim
// directly, at any level. Of the cycle, the engine works for its mean time
// less the mean wait for the policy row (the policy_wait statement, the
// only nested statement that ends "for update"), and the rest is what the
// combiner does around the walk, the hand-off to the next one and, with one
// claimer, the client's round trip. Claims per walk is the batching that
// combined calls reached.
func serializedSection(ctx context.Context, env *docketEnv, res loopResult, report *strings.Builder) error {
	var walks int64
	var engineMs, waitMs float64
	if err := env.pool.QueryRow(ctx, `
		select coalesce(sum(calls) filter (where query like '%docket_tenant_fair_claim(%'), 0),
		       coalesce(sum(total_exec_time) filter (where query like '%docket_tenant_fair_claim(%'), 0),
		       coalesce(sum(total_exec_time) filter (where not toplevel and query ~ 'for update$'), 0)
		  from pg_stat_statements
		 where dbid = (select oid from pg_database where datname = current_database())`).
		Scan(&walks, &engineMs, &waitMs); err != nil {
		return err
	}
	if walks == 0 || len(res.Calls) == 0 {
		return fmt.Errorf("no walk was counted")
	}
	cycle := ms(res.Elapsed) / float64(walks)
	work := (engineMs - waitMs) / float64(walks)
	fmt.Fprintf(report, "per walk (%d walks, %.1f claims per walk): cycle %.3f ms (elapsed / walks), engine work %.3f ms (engine time %.3f ms less policy row wait %.3f ms), rest %.3f ms\n",
		walks, float64(res.Claims)/float64(walks), cycle, work, engineMs/float64(walks), waitMs/float64(walks), cycle-work)
	return nil
}

// profileDrain drains no-op runs with a TenantFair Worker and reports the
// top statements.
func profileDrain(ctx context.Context, c *cluster, sz sizes, p *progress, report *strings.Builder) (err error) {
	b := newBook(sz.DrainRuns)
	runs := b.addManySpread(sz.DrainRuns, drainTenants, 0)
	b.seal()
	d, err := newDocketDrain(ctx, c, engineTenantFair, drainCap, b)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.close()) }()
	if err := d.insert(ctx, runs); err != nil {
		return err
	}
	if err := d.env.exec(ctx, "vacuum analyze"); err != nil {
		return err
	}
	if err := resetStatements(ctx, d.env); err != nil {
		return err
	}
	times, err := drainBacklog(ctx, p, "profile drain", d, b)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "\n== Worker drain: %d no-op runs over %d tenants, concurrency %d, cap %d: %.0f runs/s ==\n",
		sz.DrainRuns, drainTenants, drainConcurrency, drainCap, times.rate(sz.DrainRuns))
	return topStatements(ctx, d.env, report)
}

// profileCapped drains the fairness scenario's backlog (a hot tenant held at
// cap 4 behind light tenants, 5 ms handler) with a TenantFair Worker and
// reports the top statements: visits to the capped partition are denials.
func profileCapped(ctx context.Context, c *cluster, sz sizes, p *progress, report *strings.Builder) (err error) {
	hot := int(float64(sz.FairnessRuns) * hotShare)
	b := newBook(sz.FairnessRuns)
	hotRuns := b.addMany(hotTenant, hot, fairnessHandler)
	var lightRuns []int
	for i := 0; i < sz.FairnessRuns-hot; i++ {
		lightRuns = append(lightRuns, b.add(lightTenant(i%fairnessLightTenants), fairnessHandler))
	}
	b.seal()
	d, err := newDocketDrain(ctx, c, engineTenantFair, fairnessCap, b)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.close()) }()
	if err := resetStatements(ctx, d.env); err != nil {
		return err
	}
	times, err := drainBacklog(ctx, p, "profile capped drain", d, b, hotRuns, lightRuns)
	if err != nil {
		return err
	}
	fmt.Fprintf(report, "\n== Worker drain of the fairness backlog: hot tenant %d runs at cap %d, %d light runs over %d tenants, handler %s: %.0f runs/s ==\n",
		hot, fairnessCap, sz.FairnessRuns-hot, fairnessLightTenants, fairnessHandler, times.rate(sz.FairnessRuns))
	return topStatements(ctx, d.env, report)
}

// resetStatements installs pg_stat_statements in env's database and resets
// its counters.
func resetStatements(ctx context.Context, env *docketEnv) error {
	if err := env.exec(ctx, "create extension if not exists pg_stat_statements"); err != nil {
		return err
	}
	return env.exec(ctx, "select pg_stat_statements_reset()")
}

// topStatements writes the statements of env's database that took the most
// execution time, nested ones included.
func topStatements(ctx context.Context, env *docketEnv, report *strings.Builder) error {
	rows, err := env.pool.Query(ctx, `
		select toplevel, calls, total_exec_time, mean_exec_time, rows, shared_blks_hit, shared_blks_read,
		       left(regexp_replace(query, '\s+', ' ', 'g'), 300)
		  from pg_stat_statements
		 where dbid = (select oid from pg_database where datname = current_database())
		 order by total_exec_time desc
		 limit $1`, profileTopN)
	if err != nil {
		return err
	}
	defer rows.Close()
	fmt.Fprintf(report, "%-5s %8s %10s %9s %9s %11s %9s  %s\n", "top", "calls", "total ms", "mean ms", "rows", "blks hit", "blks read", "query")
	for rows.Next() {
		var top bool
		var calls, nrows, hit, read int64
		var total, meanMs float64
		var query string
		if err := rows.Scan(&top, &calls, &total, &meanMs, &nrows, &hit, &read, &query); err != nil {
			return err
		}
		fmt.Fprintf(report, "%-5v %8d %10.1f %9.3f %9d %11d %9d  %s\n", top, calls, total, meanMs, nrows, hit, read, query)
	}
	return rows.Err()
}

// profileExplain loads runs due now over tenants, makes warm claim calls of
// demand 16, then one claim call of each of demands with auto_explain
// reporting every nested statement's plan as a notice.
func profileExplain(ctx context.Context, c *cluster, runs, tenants, warm int, demands []int, report *strings.Builder) (err error) {
	env, err := openDocket(ctx, c, engineTenantFair, uncappedCap, 3)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.close()) }()
	if err := loadDocketBacklog(ctx, env, runs, tenants); err != nil {
		return err
	}
	claim := docketClaim(env.client, ceilingDemand)
	for range warm {
		if _, err := claim(ctx); err != nil {
			return err
		}
	}
	for _, demand := range demands {
		plans, elapsed, err := explainCall(ctx, c, env, demand)
		if err != nil {
			return err
		}
		fmt.Fprintf(report, "\n== auto_explain of one claim call, demand %d, on %d runs over %d tenants after %d calls of demand %d (%.2f ms with explain overhead) ==\n",
			demand, runs, tenants, warm, ceilingDemand, ms(elapsed))
		report.WriteString(plans)
	}
	return nil
}

// explainCall makes one claim call on a connection of its own with
// auto_explain at notice level and returns the plans it reported.
func explainCall(ctx context.Context, c *cluster, env *docketEnv, demand int) (string, time.Duration, error) {
	var db string
	if err := env.pool.QueryRow(ctx, "select current_database()").Scan(&db); err != nil {
		return "", 0, err
	}
	var plans strings.Builder
	conn, err := connectWithNotices(ctx, c, db, &plans)
	if err != nil {
		return "", 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, s := range []string{
		"load 'auto_explain'",
		"set auto_explain.log_min_duration = 0",
		"set auto_explain.log_analyze = on",
		"set auto_explain.log_buffers = on",
		"set auto_explain.log_nested_statements = on",
		"set auto_explain.log_level = notice",
		"set client_min_messages = notice",
	} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return "", 0, fmt.Errorf("%s: %w", s, err)
		}
	}
	start := time.Now()
	_, err = conn.Exec(ctx, `select * from docket_tenant_fair_claim(now(), now() - interval '1 hour', $1, 1000, null, false)`, demand)
	return plans.String(), time.Since(start), err
}
