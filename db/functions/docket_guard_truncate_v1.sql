-- TRUNCATE fires no row triggers, so it would bypass the ring counter; it is
-- refused on every table the counter depends on.
create function docket_guard_truncate() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    raise exception 'docket: TRUNCATE of % is refused; delete rows instead', tg_table_name
        using errcode = 'integrity_constraint_violation';
end;
$$;
