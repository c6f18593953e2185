-- Removes deleted unfinished runs from the ring counter, once per statement.
create function docket_runs_track_delete() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    -- Counters are locked in scope order first, as in
    -- docket_runs_track_insert, so concurrent writers cannot deadlock.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select r.scope_key from docket_deleted_runs r
                             where r.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

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
