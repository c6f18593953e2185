-- Gives every new owner partition its ring position in the same statement, so
-- no partition can exist without a place in the rotation.
create function docket_claim_partitions_schedule() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    insert into docket_claim_schedule (scope_key) values (new.scope_key);
    return null;
end;
$$;
