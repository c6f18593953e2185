-- name: QueueGauges :many
-- The domain's queue at the database clock, for the queue gauges: the
-- running runs that are not poisoned, by phase (queued, ready, paused,
-- retrying, scheduled, executing), each phase's count and, in seconds, how
-- long ago its earliest wake_at was (0 for executing, whose runs have
-- none). The phase is docket_run_phase's, spelled out here so that the
-- unclaimed runs are read through docket_runs_ready_idx and the claimed
-- ones through docket_runs_expired_idx without a function call per run; a
-- test holds the two equal on runs of every phase. Waiting, poisoned and
-- finished runs, which no index selects, are not read.
with policy as materialized (
    select pol.admission_mode = 'tenant_fair' as tenant_fair, pol.paused as domain_paused
      from /*schema*/docket_claim_policy pol
     where pol.id = 1
),
paused as materialized (
    select p.scope_key
      from /*schema*/docket_claim_partitions p
     where p.paused
       and exists (select from policy where policy.tenant_fair)
),
unclaimed as (
    select case
             when r.scope_key in (select scope_key from paused) then 'paused'
             when exists (select from policy where policy.domain_paused) then 'paused'
             when r.wake_at > now()
                  and jsonb_array_length(r.errors) > 0
                  and r.errors -> -1 ->> 'kind' <> 'retry'
                  and (r.errors -> -1 ->> 'at')::timestamptz = r.updated_at then 'retrying'
             when r.wake_at > now() then 'scheduled'
             when r.tenant_admitted_at is not null then 'ready'
             else 'queued'
           end as phase,
           r.wake_at
      from /*schema*/docket_runs r
     where r.status = 'running' and r.poisoned_at is null and r.claim_token is null
)
select u.phase::text as phase, count(*)::bigint as runs,
       coalesce(extract(epoch from now() - min(u.wake_at)), 0)::float8 as oldest_wake_age_seconds
  from unclaimed u
 group by u.phase
union all
select 'executing', count(*)::bigint, 0::float8
  from /*schema*/docket_runs r
 where r.status = 'running' and r.poisoned_at is null and r.claim_token is not null;
