-- A unique run holds its key only while its status is one of the statuses
-- its insert named (unique_statuses): a write that moves it to another
-- status clears the three unique columns, so the run leaves
-- docket_runs_unique_idx and a new run may take the key. A key is only ever
-- written by an insert, so no update can meet the unique index, and a run
-- that later returns to a covered status (an operator's retry, a resume)
-- does not take its key back.
create function docket_runs_release_unique() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    new.unique_key := null;
    new.unique_bucket := null;
    new.unique_statuses := null;
    return new;
end;
$$;
