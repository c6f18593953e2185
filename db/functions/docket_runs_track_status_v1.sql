-- Moves one run into or out of the unfinished count when its status crosses
-- the running/waiting versus terminal boundary. The trigger's WHEN clause
-- keeps ordinary claim traffic, which never crosses it, off this path.
create function docket_runs_track_status() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    update docket_claim_schedule
       set unfinished_count = unfinished_count
               + case when new.status in ('running', 'waiting') then 1 else -1 end,
           updated_at = now()
     where scope_key = new.scope_key;
    return null;
end;
$$;
