-- Wake by write for updates: a run that becomes healthy, unclaimed and
-- running, or such a run whose wake_at changes (a resume, a retried poison,
-- a moved timer), may make its parked partition eligible. The trigger's WHEN
-- clause selects exactly those updates; a claim release needs nothing, since
-- a partition with a claimed row never parks, and claim traffic (leases and
-- poisons) never fires it, so the claim engine never waits on a schedule row.
--
-- The schedule row is written unconditionally, never only "where
-- parked_until is not null": that filter would read a snapshot that can miss
-- a park committed after it, while an unconditional update waits for the
-- parking call and then applies to the row it parked. A run due at the write
-- unparks the partition; one due later parks it no later than its wake_at.
create function docket_runs_wake_partition() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    update docket_claim_schedule s
       set parked_until = case
               when s.parked_until is null or new.wake_at <= now() then null
               else least(s.parked_until, new.wake_at) end
     where s.scope_key = new.scope_key;
    return null;
end;
$$;
