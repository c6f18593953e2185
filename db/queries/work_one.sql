-- name: LockOtherClaimableRuns :one
-- dockettest.Work's fence around one run: inside a transaction of its own,
-- it locks every other healthy running run, so a claim call made meanwhile
-- on another connection skips them (both engines lock candidates with skip
-- locked) and can lease only the run under test, by the engine's own rules.
-- Rows another transaction holds are skipped here and by the claim alike.
select count(*)::bigint as locked
  from (select r.id
          from /*schema*/docket_runs r
         where r.run_id <> sqlc.arg(run_id) and r.status = 'running' and r.poisoned_at is null
           for update skip locked) as l;

-- name: OlderQueuedRuns :one
-- The queued runs of a scope ahead of one run in its FIFO: TenantFair
-- promotes a scope's queued runs in (wake_at, id) order only.
select count(*)::bigint as older
  from /*schema*/docket_runs o
  join /*schema*/docket_runs r on r.scope_key = o.scope_key
 where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
   and o.status = 'running' and o.poisoned_at is null and o.claim_token is null
   and o.tenant_admitted_at is null and o.wake_at <= now()
   and (o.wake_at, o.id) < (r.wake_at, r.id);
