-- The ring is authoritative, not a cache: its counter is written only by the
-- run lifecycle triggers (which run one trigger level deeper than any client
-- statement), positions are immutable, and a row that still counts unfinished
-- work cannot be removed. There is deliberately no reconciliation path.
create function docket_claim_schedule_guard() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if tg_op = 'INSERT' then
        if pg_trigger_depth() < 2 or new.unfinished_count <> 0 then
            raise exception 'docket: schedule rows are created only by their claim partition'
                using errcode = 'integrity_constraint_violation';
        end if;
        return new;
    end if;

    if tg_op = 'DELETE' then
        if old.unfinished_count > 0 then
            raise exception 'docket: schedule row % still counts % unfinished runs',
                    quote_literal(old.scope_key), old.unfinished_count
                using errcode = 'integrity_constraint_violation';
        end if;
        return old;
    end if;

    if new.scope_key is distinct from old.scope_key
            or new.ring_position is distinct from old.ring_position then
        raise exception 'docket: schedule scope and ring position are immutable'
            using errcode = 'integrity_constraint_violation';
    end if;
    if new.unfinished_count is distinct from old.unfinished_count then
        if pg_trigger_depth() < 2 then
            raise exception 'docket: unfinished_count is maintained by triggers only'
                using errcode = 'integrity_constraint_violation';
        end if;
        if new.unfinished_count < 0 then
            raise exception 'docket: unfinished_count underflow for scope %', quote_literal(old.scope_key)
                using errcode = 'integrity_constraint_violation';
        end if;
    end if;
    return new;
end;
$$;
