-- Partitions are the admission authority of a scope: their key never changes,
-- and one that still owns runs cannot disappear, or its nonterminal work would
-- silently leave the ring.
create function docket_claim_partitions_guard() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if tg_op = 'UPDATE' then
        if new.scope_key is distinct from old.scope_key then
            raise exception 'docket: the scope_key of a claim partition is immutable'
                using errcode = 'integrity_constraint_violation';
        end if;
        return new;
    end if;

    if exists (select 1 from docket_runs r where r.scope_key = old.scope_key) then
        raise exception 'docket: claim partition % still owns runs', quote_literal(old.scope_key)
            using errcode = 'integrity_constraint_violation';
    end if;
    return old;
end;
$$;
