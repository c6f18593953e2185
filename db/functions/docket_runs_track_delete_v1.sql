-- Removes deleted unfinished runs from the ring counter, once per statement.
create function docket_runs_track_delete() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count - d.removed,
           updated_at = now()
      from (select r.scope_key, count(*) as removed
              from docket_deleted_runs r
             where r.status in ('running', 'waiting')
             group by r.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;
