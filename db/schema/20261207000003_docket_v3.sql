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

-- The claim that made a run's latest commit. A holder whose commit lost its
-- answer asks whether the row shows that commit; an identical commit by a
-- later holder of the run (after the claim expired) must not count as its
-- own, so every commit records its claim token. No index names it, so the
-- commit's update stays heap-only as before.
alter table docket_runs add column last_commit_token uuid;

-- include docket_commit_runs_v2.sql
-- The Worker's verdicts, many holders' commits in one statement: element i
-- of the arrays is one holder's commit, fenced like CommitRun on its exact
-- claim token and expected checkpoint_seq, with its own schedule and the
-- same column writes. Each result row names its commit by claim token; a
-- commit whose fence fails matches no row and is absent from the result,
-- and the others still commit. Claim tokens travel as text. An empty string
-- stands for a NULL state, checkpoint type or error kind; wake_at is read
-- only by the 'at' schedule and wake_delay_us only by 'after'. Parallel
-- unnests zip the arrays. The prior CTE locks the fenced rows in
-- (scope_key, id) order, so the status trigger's counter writes of two
-- concurrent batches take their scopes' locks in the same order;
-- marker_cleared compares the marker this statement replaced with the one
-- it wrote, as in CommitRun. last_commit_token records the claim that made
-- the commit, so a holder that lost a commit's answer can tell its own
-- commit from another claim's identical one (CommitApplied).
--
-- It is a function, not a statement the client prepares, for its plan. A
-- prepared statement whose arrays arrive as parameters is planned afresh on
-- every execution: the planner counts a bound array's elements, so a plan
-- for the one or two commits a Worker usually sends always looks cheaper
-- than the generic plan, which assumes ten, and planning this statement cost
-- more than running it. Here the one plan is kept for the session.
create or replace function docket_commit_runs(
    p_scope_keys text[],
    p_run_ids text[],
    p_claim_tokens text[],
    p_expected_seqs bigint[],
    p_steps integer[],
    p_states text[],
    p_checkpoint_types text[],
    p_statuses text[],
    p_schedules text[],
    p_wake_ats timestamptz[],
    p_wake_delays_us bigint[],
    p_attempt_changes text[],
    p_error_kinds text[],
    p_error_texts text[]
) returns table (
    claim_token uuid,
    checkpoint_seq bigint,
    step integer,
    marker_cleared boolean
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The right plan does not depend on how many commits a call carries.
    set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
    return query
    -- statement commit
    with batch as (
        select unnest(p_scope_keys) as scope_key,
               unnest(p_run_ids) as run_id,
               unnest(p_claim_tokens)::uuid as claim_token,
               unnest(p_expected_seqs) as expected_seq,
               unnest(p_steps) as step,
               unnest(p_states) as state,
               unnest(p_checkpoint_types) as checkpoint_type,
               unnest(p_statuses) as status,
               unnest(p_schedules) as schedule,
               unnest(p_wake_ats) as wake_at,
               unnest(p_wake_delays_us) as wake_delay_us,
               unnest(p_attempt_changes) as attempt_change,
               unnest(p_error_kinds) as error_kind,
               unnest(p_error_texts) as error_text
    ), prior as materialized (
        select r.id, r.tenant_admitted_at, b.claim_token, b.expected_seq, b.step,
               nullif(b.state, '') as state, nullif(b.checkpoint_type, '') as checkpoint_type,
               b.status, b.schedule, b.wake_at, b.wake_delay_us, b.attempt_change,
               nullif(b.error_kind, '') as error_kind, b.error_text
          from batch b
          join docket_runs r on r.scope_key = b.scope_key and r.run_id = b.run_id
         where r.claim_token = b.claim_token and r.checkpoint_seq = b.expected_seq
         order by r.scope_key, r.id
           for no key update of r
    )
    update docket_runs r
       set checkpoint_seq = r.checkpoint_seq + 1,
           state = coalesce(p.state::jsonb, r.state),
           step = p.step,
           latest_checkpoint_type = p.checkpoint_type,
           status = p.status,
           claim_token = case when p.schedule = 'retain' then r.claim_token end,
           claimed_at = case when p.schedule = 'retain' then greatest(r.claimed_at, now()) end,
           wake_at = case p.schedule
                         when 'immediate' then now()
                         when 'at' then p.wake_at
                         when 'after' then now() + interval '1 microsecond' * p.wake_delay_us
                     end,
           tenant_admitted_at = case when p.schedule in ('retain', 'immediate')
                                     then r.tenant_admitted_at end,
           finished_at = case when p.schedule = 'terminal' then now() end,
           claim_attempts = 0,
           claim_abandons = 0,
           attempt = case p.attempt_change
                         when 'count' then least(r.attempt::bigint + 1, 2147483647)::integer
                         when 'keep' then r.attempt
                         else 0
                     end,
           errors = case when p.error_kind is null then r.errors
                         else (case when jsonb_array_length(r.errors) >= 20 then r.errors - 0 else r.errors end)
                              || jsonb_build_array(jsonb_build_object(
                                     'attempt', least(r.attempt::bigint + 1, 2147483647),
                                     'at', now(),
                                     'kind', p.error_kind,
                                     'error', p.error_text))
                     end,
           last_commit_token = p.claim_token,
           updated_at = now()
      from prior p
     where r.id = p.id
       and r.claim_token = p.claim_token
       and r.checkpoint_seq = p.expected_seq
    returning p.claim_token, r.checkpoint_seq, r.step,
              (p.tenant_admitted_at is not null and r.tenant_admitted_at is null);
    -- end statement
end
$$;
-- end include

-- migrate:down

-- include docket_commit_runs_v1.sql
-- The Worker's verdicts, many holders' commits in one statement: element i
-- of the arrays is one holder's commit, fenced like CommitRun on its exact
-- claim token and expected checkpoint_seq, with its own schedule and the
-- same column writes. Each result row names its commit by claim token; a
-- commit whose fence fails matches no row and is absent from the result,
-- and the others still commit. Claim tokens travel as text. An empty string
-- stands for a NULL state, checkpoint type or error kind; wake_at is read
-- only by the 'at' schedule and wake_delay_us only by 'after'. Parallel
-- unnests zip the arrays. The prior CTE locks the fenced rows in
-- (scope_key, id) order, so the status trigger's counter writes of two
-- concurrent batches take their scopes' locks in the same order;
-- marker_cleared compares the marker this statement replaced with the one
-- it wrote, as in CommitRun.
--
-- It is a function, not a statement the client prepares, for its plan. A
-- prepared statement whose arrays arrive as parameters is planned afresh on
-- every execution: the planner counts a bound array's elements, so a plan
-- for the one or two commits a Worker usually sends always looks cheaper
-- than the generic plan, which assumes ten, and planning this statement cost
-- more than running it. Here the one plan is kept for the session.
create or replace function docket_commit_runs(
    p_scope_keys text[],
    p_run_ids text[],
    p_claim_tokens text[],
    p_expected_seqs bigint[],
    p_steps integer[],
    p_states text[],
    p_checkpoint_types text[],
    p_statuses text[],
    p_schedules text[],
    p_wake_ats timestamptz[],
    p_wake_delays_us bigint[],
    p_attempt_changes text[],
    p_error_kinds text[],
    p_error_texts text[]
) returns table (
    claim_token uuid,
    checkpoint_seq bigint,
    step integer,
    marker_cleared boolean
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The right plan does not depend on how many commits a call carries.
    set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
begin
    return query
    -- statement commit
    with batch as (
        select unnest(p_scope_keys) as scope_key,
               unnest(p_run_ids) as run_id,
               unnest(p_claim_tokens)::uuid as claim_token,
               unnest(p_expected_seqs) as expected_seq,
               unnest(p_steps) as step,
               unnest(p_states) as state,
               unnest(p_checkpoint_types) as checkpoint_type,
               unnest(p_statuses) as status,
               unnest(p_schedules) as schedule,
               unnest(p_wake_ats) as wake_at,
               unnest(p_wake_delays_us) as wake_delay_us,
               unnest(p_attempt_changes) as attempt_change,
               unnest(p_error_kinds) as error_kind,
               unnest(p_error_texts) as error_text
    ), prior as materialized (
        select r.id, r.tenant_admitted_at, b.claim_token, b.expected_seq, b.step,
               nullif(b.state, '') as state, nullif(b.checkpoint_type, '') as checkpoint_type,
               b.status, b.schedule, b.wake_at, b.wake_delay_us, b.attempt_change,
               nullif(b.error_kind, '') as error_kind, b.error_text
          from batch b
          join docket_runs r on r.scope_key = b.scope_key and r.run_id = b.run_id
         where r.claim_token = b.claim_token and r.checkpoint_seq = b.expected_seq
         order by r.scope_key, r.id
           for no key update of r
    )
    update docket_runs r
       set checkpoint_seq = r.checkpoint_seq + 1,
           state = coalesce(p.state::jsonb, r.state),
           step = p.step,
           latest_checkpoint_type = p.checkpoint_type,
           status = p.status,
           claim_token = case when p.schedule = 'retain' then r.claim_token end,
           claimed_at = case when p.schedule = 'retain' then greatest(r.claimed_at, now()) end,
           wake_at = case p.schedule
                         when 'immediate' then now()
                         when 'at' then p.wake_at
                         when 'after' then now() + interval '1 microsecond' * p.wake_delay_us
                     end,
           tenant_admitted_at = case when p.schedule in ('retain', 'immediate')
                                     then r.tenant_admitted_at end,
           finished_at = case when p.schedule = 'terminal' then now() end,
           claim_attempts = 0,
           claim_abandons = 0,
           attempt = case p.attempt_change
                         when 'count' then least(r.attempt::bigint + 1, 2147483647)::integer
                         when 'keep' then r.attempt
                         else 0
                     end,
           errors = case when p.error_kind is null then r.errors
                         else (case when jsonb_array_length(r.errors) >= 20 then r.errors - 0 else r.errors end)
                              || jsonb_build_array(jsonb_build_object(
                                     'attempt', least(r.attempt::bigint + 1, 2147483647),
                                     'at', now(),
                                     'kind', p.error_kind,
                                     'error', p.error_text))
                     end,
           updated_at = now()
      from prior p
     where r.id = p.id
       and r.claim_token = p.claim_token
       and r.checkpoint_seq = p.expected_seq
    returning p.claim_token, r.checkpoint_seq, r.step,
              (p.tenant_admitted_at is not null and r.tenant_admitted_at is null);
    -- end statement
end
$$;
-- end include

alter table docket_runs drop column last_commit_token;

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
