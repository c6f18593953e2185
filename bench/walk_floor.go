package main

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// engineWalkFloor names the walk floor in scenario 5's table.
const engineWalkFloor engineName = "walk_floor"

// walkFloorFunction is a measuring probe, not an engine: the least a claim
// call that keeps TenantFair's walk must do while it holds the domain's
// cursor, for a demand of one whose first position has work. It locks the
// policy row, takes the next ring position after the cursor, locks that
// partition without waiting, counts its admissions up to the cap, locks
// its queued FIFO head without waiting, leases it with an admission,
// advances the partition's epoch and the cursor. It leaves out all the
// engine does beyond that (the argument and transaction checks, the
// bounded lock wait, the ring window, the other pages and classes, the
// FIFO recheck, poisons, outcome and trace rows), so no engine that keeps
// the walk serializes less per call; scenario 5 runs it on the same
// backlog to show what that bound allows against Legacy.
const walkFloorFunction = `
create function bench_walk_floor(p_now timestamptz) returns bigint
    language plpgsql
    set plan_cache_mode = force_generic_plan
as $$
declare
    v_cursor bigint;
    v_cap integer;
    v_pos bigint;
    v_scope text;
    v_admitted bigint;
    v_id bigint;
begin
    select p.scan_ring_position, p.max_active into v_cursor, v_cap
      from docket_claim_policy p where p.id = 1 for update;
    select s.ring_position, s.scope_key into v_pos, v_scope
      from docket_claim_schedule s
     where s.unfinished_count > 0 and s.ring_position > v_cursor
     order by s.ring_position limit 1;
    if v_pos is null then
        select s.ring_position, s.scope_key into v_pos, v_scope
          from docket_claim_schedule s
         where s.unfinished_count > 0
         order by s.ring_position limit 1;
    end if;
    perform from docket_claim_partitions pa where pa.scope_key = v_scope for no key update skip locked;
    select count(*) into v_admitted
      from (select from docket_runs r where r.scope_key = v_scope and docket_run_marked(r) limit v_cap) a;
    select r.id into v_id
      from docket_runs r
     where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
     order by r.wake_at, r.id limit 1
       for update skip locked;
    if v_id is not null and v_admitted < v_cap then
        update docket_runs
           set claim_token = gen_random_uuid(), claimed_at = p_now, wake_at = null,
               tenant_admitted_at = p_now, claim_attempts = claim_attempts + 1
         where id = v_id;
        update docket_claim_partitions set admission_epoch = admission_epoch + 1 where scope_key = v_scope;
    else
        v_id := null;
    end if;
    update docket_claim_policy set scan_ring_position = coalesce(v_pos, v_cursor) where id = 1;
    return v_id;
end
$$`

// walkFloorClaim is one call of the walk floor on pool: one claim or none.
func walkFloorClaim(pool *pgxpool.Pool) claimFunc {
	return func(ctx context.Context) (int, error) {
		var id *int64
		if err := pool.QueryRow(ctx, `select bench_walk_floor($1)`, time.Now()).Scan(&id); err != nil {
			return 0, err
		}
		if id == nil {
			return 0, nil
		}
		return 1, nil
	}
}

// measureWalkFloor runs s's claim loops with the walk floor on a fresh
// TenantFair database holding s's backlog.
func measureWalkFloor(ctx context.Context, c *cluster, s claimSetup, budget time.Duration) (loopResult, error) {
	env, err := openDocket(ctx, c, engineTenantFair, uncappedCap, s.Claimers+2)
	if err != nil {
		return loopResult{}, err
	}
	if err := loadDocketBacklog(ctx, env, s.Runs, s.Tenants); err != nil {
		return loopResult{}, errors.Join(err, env.close())
	}
	if _, err := env.pool.Exec(ctx, walkFloorFunction); err != nil {
		return loopResult{}, errors.Join(err, env.close())
	}
	claims := make([]claimFunc, s.Claimers)
	for i := range claims {
		claims[i] = walkFloorClaim(env.pool)
	}
	res, err := runClaimLoops(ctx, claims, s.Runs, budget)
	return res, errors.Join(err, env.close())
}
