-- migrate:up

-- Schema V3 (open: the next release's migration, edited in place until that
-- release records it).
--
-- The database checks what any writer of a run can write, so a direct
-- insert (the generated repository, psql) is held to the rules the facade
-- checks before any SQL, and the facade maps each refusal to the typed
-- error of its own check (docket/validate.go states the rules once for both):
-- identifiers hold a character other than a space, are at most 200 bytes
-- and are free of control characters (U+0001 to U+001F and U+007F to
-- U+009F; text cannot hold U+0000), and a required-tenancy domain stores no
-- tenantless run. Adding
-- the checks validates every existing row under an ACCESS EXCLUSIVE lock, as
-- any migration runs with the domain stopped.
alter table docket_runs
    drop constraint docket_runs_tenant_id_check,
    add constraint docket_runs_tenant_id_check
        check (tenant_id is null
               or (tenant_id ~ '[^ ]' and octet_length(tenant_id) <= 200
                   and tenant_id !~ '[\u0001-\u001f\u007f-\u009f]')),
    add constraint docket_runs_run_id_check
        check (run_id ~ '[^ ]' and octet_length(run_id) <= 200
               and run_id !~ '[\u0001-\u001f\u007f-\u009f]'),
    add constraint docket_runs_graph_id_check
        check (graph_id ~ '[^ ]' and octet_length(graph_id) <= 200
               and graph_id !~ '[\u0001-\u001f\u007f-\u009f]'),
    add constraint docket_runs_graph_hash_check
        check (graph_hash ~ '[^ ]' and octet_length(graph_hash) <= 200
               and graph_hash !~ '[\u0001-\u001f\u007f-\u009f]');

-- The domain's tenancy, as the last Open set it from Config.TenantMode.
alter table docket_claim_policy
    add column tenant_required boolean not null default false;

-- include docket_runs_require_tenant_v1.sql
-- Under required tenancy (docket_claim_policy.tenant_required, which Open
-- sets from Config.TenantMode) no tenantless run is inserted, whatever writes
-- it: the facade refuses one before any SQL with the same typed error, and a
-- direct insert (the generated repository, psql) meets this trigger.
create function docket_runs_require_tenant() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    if exists (select 1 from docket_created_runs r where r.tenant_id is null)
       and (select p.tenant_required from docket_claim_policy p where p.id = 1) then
        raise exception 'docket: tenant required: the domain requires a tenant and a run has none'
            using errcode = 'check_violation', constraint = 'docket_runs_tenant_required_check';
    end if;
    return null;
end;
$$;
-- end include

create trigger docket_runs_require_tenant_trg
    after insert on docket_runs
    referencing new table as docket_created_runs
    for each statement execute function docket_runs_require_tenant();

-- migrate:down

drop trigger docket_runs_require_tenant_trg on docket_runs;
drop function docket_runs_require_tenant();
alter table docket_claim_policy drop column tenant_required;
alter table docket_runs
    drop constraint docket_runs_graph_hash_check,
    drop constraint docket_runs_graph_id_check,
    drop constraint docket_runs_run_id_check,
    drop constraint docket_runs_tenant_id_check,
    add constraint docket_runs_tenant_id_check
        check (tenant_id is null or tenant_id <> '');
