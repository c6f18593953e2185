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
