-- Creates the owner partition of every new run inside the inserting statement
-- and adds the new unfinished runs to the ring counter. Running once per
-- statement keeps bulk enqueues to one counter write per scope. Partitions are
-- created in key order so concurrent multi-tenant inserts lock alike.
--
-- The same counter write wakes a parked partition (wake by write): a new run
-- that is claimed or due now unparks it, and a new run due later parks it no
-- later than that run's wake_at. The write is unconditional, so a claim call
-- parking the partition concurrently either sees the new run, finds this
-- row locked and leaves the partition awake, or is followed by this write.
--
-- It also parks on write: in a TenantFair domain with park_dormant on, a
-- partition that had no unfinished run and receives only runs that are not
-- due (later, or waiting) is dormant, and is parked here until the earliest
-- wake_at of its new healthy unclaimed running runs, else for good. The
-- counter says the partition held nothing, so no probe of docket_runs is
-- needed; without this, every such partition would wait for a walk to visit
-- it once before it leaves the awake ring.
create or replace function docket_runs_track_insert() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
declare
    v_park boolean;
begin
    insert into docket_claim_partitions (scope_key)
    select distinct c.scope_key from docket_created_runs c order by c.scope_key
    on conflict (scope_key) do nothing;

    -- Lock the counters in scope order first, the order in which the
    -- worker's batch commit takes them, so that two writers touching the
    -- same scopes wait for each other instead of deadlocking; the update
    -- below would take them in whatever order its join produces.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select c.scope_key from docket_created_runs c
                             where c.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

    -- Read after the counter locks, in a snapshot of its own: a concurrent
    -- switch of parking or of the engine that committed before this point
    -- is seen here (docs/fairness-parked.md, the races each rule closes).
    v_park := exists (select from docket_claim_policy p
                       where p.id = 1 and p.admission_mode = 'tenant_fair' and p.park_dormant);

    -- least ignores nulls: a scope whose new runs are all waiting or
    -- poisoned keeps its parked_until. The counter read here is the one this
    -- transaction locked, so "was zero" cannot be overtaken by a concurrent
    -- insert, status change or delete of the same scope: each of those
    -- writes this row and waits for the lock. A paused partition is left
    -- awake, as the walk leaves it, so every visit refuses it.
    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count + d.created,
           parked_until = case
               when d.awake then null
               when v_park and s.unfinished_count = 0
                    and not exists (select from docket_claim_partitions pa
                                     where pa.scope_key = s.scope_key and pa.paused)
                   then coalesce(d.next_wake, 'infinity')
               when s.parked_until is null then null
               else least(s.parked_until, d.next_wake) end,
           updated_at = now()
      from (select c.scope_key, count(*) as created,
                   coalesce(bool_or(docket_run_healthy(c)
                                    and (c.claim_token is not null or c.wake_at <= now())), false) as awake,
                   min(c.wake_at) filter (where docket_run_unclaimed(c)) as next_wake
              from docket_created_runs c
             where c.status in ('running', 'waiting')
             group by c.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;
