package main

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/docketrun/docket-go/policy"
)

// engineWalkFloor names the walk floor in scenario 5's table.
const engineWalkFloor engineName = "walk_floor"

// walkFloorFunction is a measuring probe, not an engine: the least a claim
// call that keeps TenantFair's walk must do while it holds the domain's
// cursor. It locks the policy row, then visits ring positions after the
// cursor until it has the demand or made S visits. Each visit takes the
// next position with work and locks that partition without waiting; it
// counts the partition's admissions up to the cap when the partition has
// more unfinished runs than its cap; it freezes up to min(Q, demand left,
// free admissions) queued FIFO heads and then locks each of those by its id
// without waiting (the freeze that keeps a row held elsewhere from being
// replaced by the next one); it leases the rows it locked with an
// admission, returns each lease as a row of the columns a claim outcome
// carries, and advances the partition's epoch. The cursor moves once. It
// leaves out all the engine does beyond that (the argument and
// transaction checks, the bounded lock wait, the ring window, the other
// pages and classes, the recheck of locked rows, the FIFO recheck,
// poisons, the outcomes' ordinals and trace rows), so no engine that keeps
// the walk and returns its leases serializes less per call. Scenario 5
// runs it with 16 claimers of demand one, the ceiling with one claimer of
// the ceiling's demand, on the same backlogs as the engines.
var walkFloorFunction = `
create function bench_walk_floor(p_now timestamptz, p_demand integer)
    returns table (row_kind text, error_reason text, run_id text, tenant_id text, graph_id text,
                   graph_hash text, checkpoint_seq bigint, claim_token uuid, claimed_at timestamptz,
                   claim_attempt integer, poisoned_at timestamptz, poison_reason text,
                   work_class text, eligible_at timestamptz)
    language plpgsql
    set plan_cache_mode = force_generic_plan
as $$
declare
    v_cursor bigint;
    v_cap integer;
    v_pos bigint;
    v_scope text;
    v_admitted bigint;
    v_ids bigint[];
    v_got integer := 0;
    v_visits integer := 0;
begin
    select p.scan_ring_position, p.max_active into v_cursor, v_cap
      from docket_claim_policy p where p.id = 1 for update;
    while v_got < p_demand and v_visits < ` + walkFloorVisits + ` loop
        v_visits := v_visits + 1;
        v_pos := null;
        select s.ring_position, s.scope_key into v_pos, v_scope
          from docket_claim_schedule s
         where s.in_ring and s.ring_position > v_cursor
         order by s.ring_position limit 1;
        if v_pos is null then
            select s.ring_position, s.scope_key into v_pos, v_scope
              from docket_claim_schedule s
             where s.in_ring
             order by s.ring_position limit 1;
        end if;
        exit when v_pos is null;
        v_cursor := v_pos;
        perform from docket_claim_partitions pa where pa.scope_key = v_scope for no key update skip locked;
        v_admitted := case when (select s.unfinished_count
                                   from docket_claim_schedule s
                                  where s.scope_key = v_scope) > v_cap
                           then least((select count(*)
                                         from (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                                limit v_cap) a)
                                      + (select count(*)
                                           from (select from docket_runs r
                                                  where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                                  limit v_cap) c),
                                      v_cap)
                           else 0 end;
        select array_agg(l.id order by h.wake_at, h.id) into v_ids
          from (select r.id, r.wake_at
                  from docket_runs r
                 where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                 order by r.wake_at, r.id
                 limit greatest(least(` + walkFloorQuantum + `, p_demand - v_got, v_cap - v_admitted), 0)) h
          cross join lateral (select r.id
                                from docket_runs r
                               where r.id = h.id
                                 for update skip locked) l;
        if v_ids is not null then
            return query
                update docket_runs r
                   set claim_token = gen_random_uuid(), claimed_at = p_now, wake_at = null,
                       tenant_admitted_at = p_now, claim_attempts = r.claim_attempts + 1
                 where r.id = any(v_ids)
                returning 'outcome'::text, null::text, r.run_id, r.tenant_id, r.graph_id, r.graph_hash,
                          r.checkpoint_seq, r.claim_token, r.claimed_at, r.claim_attempts,
                          null::timestamptz, null::text, 'ready'::text, p_now;
            update docket_claim_partitions set admission_epoch = admission_epoch + 1 where scope_key = v_scope;
            v_got := v_got + cardinality(v_ids);
        end if;
    end loop;
    update docket_claim_policy set scan_ring_position = v_cursor where id = 1;
    return;
end
$$`

// walkFloorVisits and walkFloorQuantum are the walk's S (visits per call)
// and Q (outcomes per grant), from package policy.
var (
	walkFloorVisits  = strconv.Itoa(policy.InspectionsPerCall)
	walkFloorQuantum = strconv.Itoa(policy.OutcomesPerGrant)
)

// walkFloorClaim is one call of the walk floor of demand on pool. It
// decodes every lease row into typed fields, as a client of the engines
// decodes their outcome rows, and counts them.
func walkFloorClaim(pool *pgxpool.Pool, demand int) claimFunc {
	return func(ctx context.Context) (int, error) {
		rows, err := pool.Query(ctx, `select * from bench_walk_floor($1, $2)`, time.Now(), demand)
		if err != nil {
			return 0, err
		}
		leases, err := pgx.CollectRows(rows, pgx.RowToStructByPos[walkFloorLease])
		return len(leases), err
	}
}

// walkFloorLease is one row of the walk floor, in the columns of a claim
// outcome.
type walkFloorLease struct {
	RowKind       string
	ErrorReason   pgtype.Text
	RunID         string
	TenantID      pgtype.Text
	GraphID       string
	GraphHash     string
	CheckpointSeq int64
	ClaimToken    pgtype.UUID
	ClaimedAt     pgtype.Timestamptz
	ClaimAttempt  int32
	PoisonedAt    pgtype.Timestamptz
	PoisonReason  pgtype.Text
	WorkClass     string
	EligibleAt    pgtype.Timestamptz
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
		claims[i] = walkFloorClaim(env.pool, s.Demand)
	}
	res, err := runClaimLoops(ctx, c.cpu(), claims, s.Runs, budget)
	return res, errors.Join(err, env.close())
}
