package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// profileFleet drains the fleet scenario's backlog under each engine and
// writes, per engine, the top-level statements the fleet sent, with their
// calls and execution time per run: the per-run cost of the Worker (or of
// River's producer and completer) around the claim call.
func profileFleet(ctx context.Context, c *cluster, o options, p *progress, report *strings.Builder) error {
	sz := o.sizes
	fetch := riverFetch{Cooldown: o.riverCooldown, Poll: o.riverPoll}
	if err := c.admin(ctx, "create extension if not exists pg_stat_statements"); err != nil {
		return err
	}
	for _, engine := range []engineName{engineTenantFair, engineLegacy, engineRiver} {
		b := newBook(sz.FleetRuns)
		backlog := b.addManySpread(sz.FleetRuns, fleetTenants, fleetHandler)
		b.seal()
		s := fleetSetup{engine: engine, members: fleetMembers, concurrency: fleetConcurrency, maxActive: drainCap, fetch: fetch,
			tracer: newCallTracer(docketClaimStatements()...)}
		f, err := newFleetDrain(ctx, c, s, b)
		if err != nil {
			return err
		}
		if err := f.insert(ctx, backlog); err != nil {
			return errors.Join(err, f.close())
		}
		if err := c.admin(ctx, "select pg_stat_statements_reset()"); err != nil {
			return errors.Join(err, f.close())
		}
		d, err := drainBacklog(ctx, p, "profile fleet "+string(engine), f, b)
		if err == nil {
			fmt.Fprintf(report, "\n== Fleet drain, %s: %d runs (%s handler) over %d tenants, %d members of concurrency %d: %.0f runs/s ==\n",
				engine, sz.FleetRuns, fleetHandler, fleetTenants, fleetMembers, fleetConcurrency, d.rate(sz.FleetRuns))
			err = fleetStatements(ctx, c, f.database, sz.FleetRuns, report)
		}
		if err = errors.Join(err, f.close()); err != nil {
			return err
		}
	}
	return nil
}

// fleetStatements writes database's top-level statements by execution time
// with their calls and time per run.
func fleetStatements(ctx context.Context, c *cluster, database string, runs int, report *strings.Builder) error {
	conn, err := pgx.Connect(ctx, c.srv.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `
		select calls, rows, total_exec_time, left(regexp_replace(query, '\s+', ' ', 'g'), 160)
		  from pg_stat_statements
		 where dbid = (select oid from pg_database where datname = $1) and toplevel
		 order by total_exec_time desc
		 limit $2`, database, profileTopN)
	if err != nil {
		return err
	}
	defer rows.Close()
	var calls, totalMs float64
	fmt.Fprintf(report, "%10s %10s %12s %12s  %s\n", "calls/run", "rows/call", "exec us/run", "total ms", "query")
	for rows.Next() {
		var n, nrows int64
		var total float64
		var query string
		if err := rows.Scan(&n, &nrows, &total, &query); err != nil {
			return err
		}
		calls += float64(n)
		totalMs += total
		fmt.Fprintf(report, "%10.3f %10.2f %12.1f %12.1f  %s\n", float64(n)/float64(runs), float64(nrows)/float64(max(n, 1)), total*1000/float64(runs), total, query)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fmt.Fprintf(report, "%10.3f %10s %12.1f %12.1f  (the statements above)\n", calls/float64(runs), "", totalMs*1000/float64(runs), totalMs)
	return nil
}
