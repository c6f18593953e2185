-- A run never changes owner: moving it would desynchronize two ring counters
-- and could carry an admission marker into a scope that never granted it.
create function docket_runs_guard_scope() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if new.tenant_id is distinct from old.tenant_id then
        raise exception 'docket: the tenant of a run is immutable'
            using errcode = 'integrity_constraint_violation';
    end if;
    return new;
end;
$$;
