-- name: InspectClaimScope :one
-- One snapshot of a scope's effective policy and token-free admission counts,
-- with the default and the partition's rates, its rate time and the
-- database's now, from which the tokens left are computed.
-- A scope without a partition reads as version 0 with no ring position.
-- Admitted counts every healthy running row with a marker, due or not, since
-- that is what occupies a slot.
select
    pol.admission_mode,
    pol.max_active as default_max_active,
    pol.policy_version,
    part.max_active as override_max_active,
    coalesce(part.partition_version, 0)::bigint as partition_version,
    coalesce(part.admission_epoch, 0)::bigint as admission_epoch,
    coalesce(part.paused, false)::boolean as paused,
    sched.ring_position,
    coalesce(sched.unfinished_count, 0)::bigint as unfinished_count,
    pol.park_dormant,
    pol.rate_limit as default_rate_limit,
    pol.rate_period as default_rate_period,
    pol.rate_burst as default_rate_burst,
    part.rate_limit as override_rate_limit,
    part.rate_period as override_rate_period,
    part.rate_burst as override_rate_burst,
    coalesce(part.rate_unlimited, false)::boolean as rate_unlimited,
    part.rate_tat,
    now()::timestamptz as observed_at,
    (sched.parked_until is not null)::boolean as parked,
    -- 'infinity' (parked until a write) has no Go time: it reads as parked
    -- with no time.
    timed.parked_until,
    (select count(*) from /*schema*/docket_runs r
      where r.scope_key = sqlc.arg(scope_key)::text
        and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now()) as queued,
    (select count(*) from /*schema*/docket_runs r
      where r.scope_key = sqlc.arg(scope_key)::text
        and /*schema*/docket_run_marked_unclaimed(r) and r.wake_at <= now()) as admitted_ready,
    (select count(*) from /*schema*/docket_runs r
      where r.scope_key = sqlc.arg(scope_key)::text
        and /*schema*/docket_run_marked_claimed(r)) as admitted_claimed,
    (select count(*) from /*schema*/docket_runs r
      where r.scope_key = sqlc.arg(scope_key)::text
        and (/*schema*/docket_run_marked_unclaimed(r) or /*schema*/docket_run_marked_claimed(r))) as admitted
  from /*schema*/docket_claim_policy pol
  left join /*schema*/docket_claim_partitions part on part.scope_key = sqlc.arg(scope_key)::text
  left join /*schema*/docket_claim_schedule sched on sched.scope_key = part.scope_key
  left join /*schema*/docket_claim_schedule timed on timed.scope_key = part.scope_key
        and timed.parked_until <> 'infinity'
 where pol.id = 1;

-- name: RingPositions :one
-- The size of the ring claim calls walk, on its own partial index: the
-- Worker divides it by S to know how many unfilled claim calls make one
-- revolution. With parking on, calls walk only the awake ring.
select (case when p.park_dormant
             then (select count(*) from /*schema*/docket_claim_schedule s
                    where s.in_ring and s.parked_until is null)
             else (select count(*) from /*schema*/docket_claim_schedule s
                    where s.in_ring)
        end)::integer as positions
  from /*schema*/docket_claim_policy p
 where p.id = 1;
