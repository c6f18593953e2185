create or replace function docket_run_phase(r docket_runs, observed_at timestamptz)
    returns text
    language plpgsql
    stable
    parallel safe
    set search_path from current
as $$
-- The one definition of a run's phase, read by every query that shows or
-- filters runs. The order of the branches is the precedence: a terminal
-- status first, then the external wait, the poison facts, a held claim,
-- and for an unclaimed running run whether its tenant or its domain is paused, when it
-- is due and whether its tenant admitted it. Beyond its arguments it reads
-- the run's partition and the policy row, both by primary key.
begin
return case
    when r.status in ('done', 'failed', 'cancelled') then r.status
    when r.status = 'waiting' then 'waiting'
    when r.poisoned_at is not null then 'poisoned'
    when r.claim_token is not null then 'executing'
    -- A paused tenant's unclaimed runs wait for its resume (only TenantFair
    -- honours a tenant's pause; under Legacy they are claimed as usual), and
    -- so do a paused domain's, under either engine.
    when exists (select from docket_claim_partitions p where p.scope_key = r.scope_key and p.paused)
         and exists (select from docket_claim_policy pol where pol.id = 1 and pol.admission_mode = 'tenant_fair')
         or exists (select from docket_claim_policy pol where pol.id = 1 and pol.paused)
        then 'paused'
    -- Not due, and the last write was a failed attempt: the verdict commit
    -- appends the error entry and sets updated_at in one statement, so the
    -- newest entry's time equals updated_at exactly when nothing wrote the
    -- run since. An operator's retry entry is not a failed attempt.
    when r.wake_at > observed_at
         and jsonb_array_length(r.errors) > 0
         and r.errors -> -1 ->> 'kind' <> 'retry'
         and (r.errors -> -1 ->> 'at')::timestamptz = r.updated_at then 'retrying'
    when r.wake_at > observed_at then 'scheduled'
    when r.tenant_admitted_at is not null then 'ready'
    else 'queued'
end;
end
$$;
