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

-- The derived run states name only the columns of their run, no other
-- state, so a statement that calls one means the same on a connection whose
-- search_path does not name Docket's schema (the inlined predicates, and so
-- the plans, are unchanged).
-- include docket_run_claimed_v2.sql
-- A healthy run a holder claims (expired once its claimed_at is older than
-- the caller's cutoff).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
$$;
-- end include

-- include docket_run_unclaimed_v2.sql
-- A healthy run that no holder claims (ready once its wake_at is due).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is null
$$;
-- end include

-- include docket_run_marked_claimed_v2.sql
-- A claimed run with an admission marker: the expired page once its claim is
-- older than the cutoff (docket_runs_admitted_claimed_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_marked_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
       and r.tenant_admitted_at is not null
$$;
-- end include

-- include docket_run_marked_unclaimed_v2.sql
-- An unclaimed run with an admission marker: the admitted-ready page once due
-- (docket_runs_admitted_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_marked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is null
       and r.tenant_admitted_at is not null
$$;
-- end include

-- include docket_run_unmarked_claimed_v2.sql
-- A claimed run without an admission marker: a Legacy claim, or one a switch
-- of engine has not marked yet (docket_runs_unadmitted_claimed_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_unmarked_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is not null
       and r.tenant_admitted_at is null
$$;
-- end include

-- include docket_run_unmarked_unclaimed_v2.sql
-- An unclaimed run without an admission marker: its tenant's FIFO, the
-- queued-ready page once due (docket_runs_queued_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause, so the body names no relation and no function, only the columns of
-- r: it means the same whatever the calling session's search_path. Its
-- predicate spells out docket_run_healthy's (running, not poisoned), which
-- every derived state builds on.
create or replace function docket_run_unmarked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select r.status = 'running' and r.poisoned_at is null and r.claim_token is null
       and r.tenant_admitted_at is null
$$;
-- end include

-- docket_run_admitted was the union of the two marked states, calling
-- them by name from its body; the statements that counted admitted runs now
-- write that union themselves, each state named behind the schema marker.
drop function docket_run_admitted(docket_runs);

-- migrate:down

-- include docket_run_claimed_v1.sql
-- A healthy run a holder claims (expired once its claimed_at is older than
-- the caller's cutoff).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_healthy(r) and r.claim_token is not null
$$;
-- end include

-- include docket_run_unclaimed_v1.sql
-- A healthy run that no holder claims (ready once its wake_at is due).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_healthy(r) and r.claim_token is null
$$;
-- end include

-- include docket_run_marked_claimed_v1.sql
-- A claimed run with an admission marker: the expired page once its claim is
-- older than the cutoff (docket_runs_admitted_claimed_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_marked_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_claimed(r) and r.tenant_admitted_at is not null
$$;
-- end include

-- include docket_run_marked_unclaimed_v1.sql
-- An unclaimed run with an admission marker: the admitted-ready page once due
-- (docket_runs_admitted_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_marked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_unclaimed(r) and r.tenant_admitted_at is not null
$$;
-- end include

-- include docket_run_unmarked_claimed_v1.sql
-- A claimed run without an admission marker: a Legacy claim, or one a switch
-- of engine has not marked yet (docket_runs_unadmitted_claimed_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unmarked_claimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_claimed(r) and r.tenant_admitted_at is null
$$;
-- end include

-- include docket_run_unmarked_unclaimed_v1.sql
-- An unclaimed run without an admission marker: its tenant's FIFO, the
-- queued-ready page once due (docket_runs_queued_ready_idx).
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_unmarked_unclaimed(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_unclaimed(r) and r.tenant_admitted_at is null
$$;
-- end include

-- include docket_run_admitted_v1.sql
-- A run that holds its tenant's admission marker, claimed or not: one of the
-- admitted runs a tenant's cap counts. It is the union of the two admitted
-- pages' states, so a statement that asks for it reads the two partial
-- indexes whose predicates they are (docket_runs_admitted_ready_idx and
-- docket_runs_admitted_claimed_idx) and no index of its own.
--
-- PostgreSQL inlines this function into the statement that calls it, so a
-- partial index whose predicate is the state still serves that statement and
-- FOR UPDATE SKIP LOCKED still locks rows of the table. Inlining forbids a SET
-- clause: the body names no relation, and the states it builds on resolve in
-- the schema of the calling statement, as docket_runs does.
create or replace function docket_run_admitted(r docket_runs)
    returns boolean
    language sql
    immutable
    parallel safe
as $$
select docket_run_marked_unclaimed(r) or docket_run_marked_claimed(r)
$$;
-- end include

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
