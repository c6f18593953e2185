
-- include docket_runs_track_insert_v2.sql
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
create or replace function docket_runs_track_insert() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
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

    -- least ignores nulls: a scope whose new runs are all waiting or
    -- poisoned keeps its parked_until.
    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count + d.created,
           parked_until = case
               when s.parked_until is null or d.awake then null
               else least(s.parked_until, d.next_wake) end,
           updated_at = now()
      from (select c.scope_key, count(*) as created,
                   coalesce(bool_or(c.status = 'running' and c.poisoned_at is null
                                    and (c.claim_token is not null or c.wake_at <= now())), false) as awake,
                   min(c.wake_at) filter (where c.status = 'running' and c.poisoned_at is null
                                            and c.claim_token is null) as next_wake
              from docket_created_runs c
             where c.status in ('running', 'waiting')
             group by c.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;
-- end include
