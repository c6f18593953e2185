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

-- Per-tenant admission rates. A rate is "at most limit promotions per
-- period, plus burst at once": the generic cell rate algorithm, one stored
-- time per partition. rate_step(limit, period) is the spacing of promotions,
-- rounded up to the microsecond so the rate is never exceeded; a promotion at
-- now is allowed when now >= rate_tat - burst * step, and moves rate_tat to
-- greatest(rate_tat, now) + step. The policy row holds the domain's default
-- rate (none unless set); a partition inherits it, overrides it with its own
-- rate, or is exempt from it (rate_unlimited). Only the claim call writes
-- rate_tat, under partition authority, in the statement that writes the grant.
alter table docket_claim_policy
    add column rate_limit integer,
    add column rate_period interval,
    add column rate_burst integer,
    add constraint docket_claim_policy_rate_check
        check ((rate_limit is null and rate_period is null and rate_burst is null)
               or (rate_limit is not null and rate_period is not null and rate_burst is not null
                   and rate_limit between 1 and 1000000
                   and rate_period between interval '1 millisecond' and interval '7 days'
                   and rate_burst between 0 and 1000000));

alter table docket_claim_partitions
    add column rate_limit integer,
    add column rate_period interval,
    add column rate_burst integer,
    add column rate_unlimited boolean not null default false,
    add column rate_tat timestamptz,
    add constraint docket_claim_partitions_rate_check
        check (((rate_limit is null and rate_period is null and rate_burst is null)
                or (rate_limit is not null and rate_period is not null and rate_burst is not null
                    and rate_limit between 1 and 1000000
                    and rate_period between interval '1 millisecond' and interval '7 days'
                    and rate_burst between 0 and 1000000))
               and not (rate_unlimited and rate_limit is not null));

-- The partitions whose rate time lies ahead, which a Worker whose claim
-- came back unfilled reads for the next token (NextRateToken). Only a
-- partition with a rate ever has a rate time, so in a domain without rates
-- the index is empty and a grant's write leaves the column null, still a
-- heap-only update.
create index docket_claim_partitions_rate_idx on docket_claim_partitions (rate_tat) where rate_tat is not null;

-- include docket_rate_step_v1.sql
-- The spacing of a rate's promotions: period / limit, rounded up to the
-- microsecond (an interval's resolution), so a partition is never admitted
-- faster than its rate. The period is read in whole microseconds first:
-- extract returns a double on PostgreSQL 13, which need not hold 0.1 exactly.
-- Its body names no relation, so it means the same on any search_path.
create function docket_rate_step(p_limit integer, p_period interval)
    returns interval
    language sql
    immutable
    strict
    parallel safe
as $$
    select ((round(extract(epoch from p_period) * 1000000)::bigint + p_limit - 1) / p_limit)
           * interval '1 microsecond'
$$;
-- end include

-- A queue-wide pause (PauseDomain): while docket_claim_policy.paused holds,
-- both engines' claim calls admit and lease nothing, claimed runs finish and
-- commit as usual, and the run phase of an unclaimed running run is
-- 'paused'. The engine interlock (admission_mode) still refuses a call
-- through the inactive engine first; a tenant's own pause holds beside it.
alter table docket_claim_policy add column paused boolean not null default false;

-- Every write of the policy row moves its version, the domain pause and the
-- default rate too, which a Legacy domain (never initialized) may write: an
-- uninitialized policy keeps no cap, but its version may move.
alter table docket_claim_policy
    drop constraint docket_claim_policy_shape_check,
    add constraint docket_claim_policy_shape_check
        check ((initialized_at is null) = (max_active is null)
               and (initialized_at is not null or configured_max_active is null));

-- include docket_legacy_claim_v2.sql
-- The Legacy admission engine: tenant-blind and oldest-first, for tenant mode
-- none. It shares the TenantFair arguments and result shape so one decoder
-- serves both, but it has no partitions, no ring, no cursor and no admission:
-- a lease never touches tenant_admitted_at (a poison clears it, because a
-- poisoned row may not hold one).
--
-- Candidates are read through two cursors with SKIP LOCKED and merged one row
-- at a time, so a call locks only the rows it takes plus at most one
-- look-ahead row per class.
--
-- The argument checks, the transaction contract and the lock wait cap are
-- those of TenantFair, shared through docket_claim_precheck. Each SQL
-- statement sits between a "-- statement NAME" and an "-- end statement"
-- line; the plan regression test reads them from this file.
create or replace function docket_legacy_claim(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean
) returns table (
    row_kind text,
    error_reason text,
    run_id text,
    tenant_id text,
    graph_id text,
    graph_hash text,
    checkpoint_seq bigint,
    claim_token uuid,
    claimed_at timestamptz,
    claim_attempt integer,
    poisoned_at timestamptz,
    poison_reason text,
    work_class text,
    eligible_at timestamptz,
    call_token uuid,
    transaction_id bigint,
    visit_ordinal integer,
    outcome_ordinal integer,
    demand integer,
    cursor_before bigint,
    cursor_after bigint,
    ring_position bigint,
    scope_key text,
    disposition text,
    outcome_count integer,
    epoch_delta integer
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The statements below take arrays and per-visit scopes whose values do
    -- not change the right plan; replanning them on every call would cost
    -- more than running them.
    set plan_cache_mode = force_generic_plan
as $$
declare
    c_call_outcomes constant integer := 256;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_domain_paused boolean;
    v_error text;

    v_limit integer := least(p_demand, c_call_outcomes);
    v_remaining integer := least(p_demand, c_call_outcomes);
    v_served_ready boolean := true;
    v_served_expired boolean := true;
    v_ready_rows refcursor;
    v_expired_rows refcursor;
    v_have_ready boolean := false;
    v_have_expired boolean := false;
    v_ready_done boolean := false;
    v_expired_done boolean := false;
    v_ready_id bigint;
    v_ready_eligible timestamptz;
    v_ready_poison boolean;
    v_ready_marked boolean;
    v_expired_id bigint;
    v_expired_eligible timestamptz;
    v_expired_poison boolean;
    v_pick_ready boolean;
    v_take_ids bigint[] := '{}';
    v_take_kinds text[] := '{}';
    v_take_poison boolean[] := '{}';
    v_take_eligible timestamptz[] := '{}';
    v_call_token uuid;
    v_xid bigint;
begin
    -- The same transaction contract as TenantFair, so neither engine can
    -- run where the other would refuse.
    v_precheck := docket_claim_precheck('docket_legacy_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    <<claim>>
    begin
        -- A share lock is enough to exclude TenantFair, which takes the row
        -- for update, while Legacy callers still run side by side.
        begin
            -- statement policy_share
            select p.admission_mode, p.paused into v_mode, v_domain_paused
              from docket_claim_policy p
             where p.id = 1
               for share;
            -- end statement
            v_policy_found := found;
        exception when lock_not_available then
            v_error := 'lock_contention';
        end;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode is distinct from 'legacy' then
                v_error := 'inactive_engine';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;
        -- A paused domain (docket_claim_policy.paused) admits and leases
        -- nothing: the call returns no row, and its claimed runs commit as
        -- usual.
        exit claim when v_domain_paused;

        -- An empty class counts as served; each probe reads the oldest
        -- entry of the ready or expired index.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
        end if;

        -- The domain's due rows by (wake_at, id), docket_runs_ready_idx.
        open v_ready_rows for
            -- statement ready_rows
            select r.id, r.wake_at, r.claim_attempts >= p_max_attempts, r.tenant_admitted_at is not null
              from docket_runs r
             where docket_run_unclaimed(r) and r.wake_at <= p_now
             order by r.wake_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement
        -- Its claims by (claimed_at, id), docket_runs_expired_idx.
        open v_expired_rows for
            -- statement expired_rows
            select r.id, r.claimed_at, r.claim_attempts >= p_max_attempts
              from docket_runs r
             where docket_run_claimed(r) and r.claimed_at < p_cutoff
             order by r.claimed_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement

        loop
            exit when cardinality(v_take_ids) >= v_limit;
            -- Demand one reads the other class only when the preferred one
            -- has nothing, so it locks no row it will not take.
            if not v_have_ready and not v_ready_done
                    and (p_demand >= 2 or p_preference is distinct from 'expired' or v_expired_done) then
                fetch v_ready_rows into v_ready_id, v_ready_eligible, v_ready_poison, v_ready_marked;
                v_have_ready := found;
                v_ready_done := not found;
            end if;
            if not v_have_expired and not v_expired_done
                    and (p_demand >= 2 or p_preference is distinct from 'ready' or v_ready_done) then
                fetch v_expired_rows into v_expired_id, v_expired_eligible, v_expired_poison;
                v_have_expired := found;
                v_expired_done := not found;
            end if;

            if v_have_ready and v_have_expired then
                -- Demand >= 2 takes an unserved class head first; otherwise
                -- (demand one reads both only without a preference) the
                -- older eligible time wins.
                v_pick_ready := case
                    when p_demand >= 2 and v_served_ready <> v_served_expired then not v_served_ready
                    else (v_ready_eligible, v_ready_id) <= (v_expired_eligible, v_expired_id) end;
            elsif v_have_ready then
                v_pick_ready := true;
            elsif v_have_expired then
                v_pick_ready := false;
            elsif v_ready_done and v_expired_done then
                exit;
            else
                continue;
            end if;

            -- Last-slot rule: the final outcome is kept for a nonempty class
            -- that is still unserved; that class has no row left here.
            exit when p_demand >= 2 and v_remaining = 1
                and not (case when v_pick_ready then v_served_expired else v_served_ready end);

            if v_pick_ready then
                v_take_ids := v_take_ids || v_ready_id;
                v_take_kinds := v_take_kinds
                    || case when v_ready_marked then 'admitted_ready' else 'queued_ready' end;
                v_take_poison := v_take_poison || v_ready_poison;
                v_take_eligible := v_take_eligible || v_ready_eligible;
                v_served_ready := true;
                v_have_ready := false;
            else
                v_take_ids := v_take_ids || v_expired_id;
                v_take_kinds := v_take_kinds || 'expired'::text;
                v_take_poison := v_take_poison || v_expired_poison;
                v_take_eligible := v_take_eligible || v_expired_eligible;
                v_served_expired := true;
                v_have_expired := false;
            end if;
            v_remaining := v_remaining - 1;
        end loop;
        close v_ready_rows;
        close v_expired_rows;

        if cardinality(v_take_ids) > 0 then
            v_call_token := gen_random_uuid();
            v_xid := txid_current();
            return query
                -- statement write
                with chosen as (
                    select t.id, t.kind, t.poison, t.eligible, t.walk
                      from unnest(v_take_ids, v_take_kinds, v_take_poison, v_take_eligible)
                               with ordinality as t(id, kind, poison, eligible, walk)
                ), mutated as (
                    update docket_runs r
                       set claim_token = case when c.poison then null else gen_random_uuid() end,
                           claimed_at = case when c.poison then null else p_now end,
                           wake_at = null,
                           claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                           tenant_admitted_at = case when c.poison then null else r.tenant_admitted_at end,
                           poisoned_at = case when c.poison then p_now end,
                           poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                           updated_at = now()
                      from chosen c
                     where r.id = c.id
                    returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash, r.checkpoint_seq,
                              r.claim_token, r.claimed_at, r.claim_attempts, r.poisoned_at,
                              r.poison_reason, c.kind, c.eligible, c.walk
                )
                select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id, m.graph_hash,
                       m.checkpoint_seq, m.claim_token, m.claimed_at, m.claim_attempts,
                       m.poisoned_at, m.poison_reason, m.kind, m.eligible, v_call_token, v_xid,
                       0, (row_number() over (order by m.walk))::integer, p_demand,
                       null::bigint, null::bigint, null::bigint, null::text,
                       case when m.kind = 'expired' then 'expired_recovery' end,
                       null::integer, null::integer
                  from mutated m
                 order by m.walk;
                -- end statement
        end if;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

-- include docket_run_phase_v2.sql
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
-- end include

-- include docket_tenant_fair_claim_v2.sql
-- The TenantFair admission engine, the only way a run of this fairness domain
-- is admitted or leased while admission_mode is 'tenant_fair'.
--
-- One call serializes on the singleton policy row (the durable scan cursor),
-- then visits up to 32 positions of the unfinished ring in cursor order. Each
-- visit tries its partition authority without waiting, freezes at most 16
-- candidate run ids, locks exactly those without waiting, rechecks them
-- against the live rows and chooses at most 8 outcomes as one grant. The
-- budgets are the specification's S = 32, Q = 8 and K = 16; they are repeated
-- in policy/budgets.go.
--
-- The outcomes of every grant are written by one statement at the end of the
-- call, with the grants' epochs and the cursor: a chosen row is locked by the
-- call and cannot change before then, and a write per call instead of one per
-- grant saves most of a grant's fixed cost. A wrap back to a partition that
-- still has unwritten outcomes writes them first, so that visit sees them.
--
-- Production reads only 'outcome' and 'error' rows; p_trace adds one
-- identity-bearing 'inspection' row per visit for trusted inspection.
--
-- Parked partitions (opt-in, docket_claim_policy.park_dormant): a visit
-- whose partition is dormant (no claimed running row, no healthy unclaimed
-- running row due at p_now) parks it until its earliest wake_at, and the walk
-- then visits only the awake ring (in_ring and parked_until is null). Each
-- call first unparks at most 64 partitions whose parked_until has come,
-- earliest first; the run lifecycle triggers unpark a partition when a write
-- can make one of its rows eligible. With park_dormant off the call is
-- exactly the specification's walk: it neither parks, sweeps nor reads
-- parked_until.
--
-- In parked mode an inspection row reports the park in columns that are null
-- on inspection rows otherwise: outcome_ordinal is 0 when the visit parked its
-- partition (the disposition stays empty_page), eligible_at is then the time
-- it is parked until (null when nothing of it is scheduled), and
-- claim_attempt is the number of partitions this call's wake sweep unparked.
--
-- The full-ring walk steps one position at a time while its visits grant,
-- as parked mode does: one keyset statement finds the next position, whose
-- partition lock statement probes its pages. From the first visit without
-- an outcome on, it discovers its positions a window at a time: one
-- statement reads the next distinct ring positions after the cursor with a
-- probe of each one's three pages, and a run of consecutive positions whose
-- probes found nothing is locked by one statement and inspected without
-- further SQL. A position whose probe found work is visited as one statement
-- for its partition lock and one for its candidates. On a ring where most
-- positions have work a call ends within a few granting visits, and a step
-- costs less than a window; where visits find nothing, the window saves a
-- statement per empty position. The visits, their order, dispositions,
-- grants and cursor are those of a walk that steps and locks one position
-- at a time; only fewer statements run (docs/claim-algorithm.md, the call
-- step by step).
--
-- A paused partition (docket_claim_partitions.paused, an operator's stop)
-- is still visited in ring order, in both walks: its visit takes the
-- partition lock and ends there with the disposition 'paused', granting and
-- leasing nothing and reading none of its pages, so its queued and ready
-- runs keep their order for the resume. Holders of its claimed runs are not
-- affected: they commit as any holder does. A paused partition is never
-- parked, since the park would hide it from the walk that must refuse it.
-- Its work is no work for the class probes either, so it never keeps a
-- call's last slot for a class only it holds.
--
-- A partition with a rate (its own, else the domain's default unless it is
-- exempt) promotes only with a token: the queued head in turn is promoted at
-- p_now only when p_now >= rate_tat - burst * step (step is
-- docket_rate_step of the limit and period), as it is only with a free slot,
-- and each promotion moves the rate time to greatest(rate_tat, p_now) + step.
-- A head without a token blocks the FIFO behind it for the visit, which ends
-- as 'rate_limited' when it has no outcome; the partition's admitted work is
-- still served, and reacquisition, expired steal and poison take no token.
-- The rate time is read under partition authority by the lock statement and
-- written with the grant, so no two calls spend one token. In parked mode a
-- rate_limited visit of an otherwise dormant partition parks it until its
-- next token. Rate-limited queued work still counts as ready work for the
-- class probes.
--
-- Every probe of a page reads the page's first entry in its index order
-- (ORDER BY the index's columns, LIMIT 1) rather than asking EXISTS, which
-- drops any ORDER BY. A session plans each statement once, on the data of
-- its first call, and keeps the plan. On a fresh backlog the admitted
-- indexes are empty, and to the planner another index over a page's rows
-- (until schema V22, one of every admitted row of a scope) then costs as
-- little as the page's own: an unordered probe planned then kept reading
-- every admitted row of the scope with a filter, on every visit, as the
-- scope's claims grew. The order makes the page's index the only one that
-- needs no sort.
--
-- The ring is the positions whose docket_claim_schedule.in_ring holds, a
-- column PostgreSQL keeps as unfinished_count > 0. The ring indexes' predicates
-- name in_ring rather than the count, so the count's update on every insert
-- and finish changes no indexed column unless the scope joins or leaves the
-- ring, and PostgreSQL writes it as a heap-only update without new index
-- entries; every statement that walks the ring names in_ring to reach them.
--
-- A scope's admitted count is the sum of its two admitted pages, the
-- unclaimed (admitted-ready, due or not) and the claimed: no index of its
-- own is kept for it, since every claim would write an entry there too.
--
-- Each SQL statement of the engine sits between a "-- statement NAME" and an
-- "-- end statement" line; the plan regression test reads them from this file.
create or replace function docket_tenant_fair_claim(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean
) returns table (
    row_kind text,
    error_reason text,
    run_id text,
    tenant_id text,
    graph_id text,
    graph_hash text,
    checkpoint_seq bigint,
    claim_token uuid,
    claimed_at timestamptz,
    claim_attempt integer,
    poisoned_at timestamptz,
    poison_reason text,
    work_class text,
    eligible_at timestamptz,
    call_token uuid,
    transaction_id bigint,
    visit_ordinal integer,
    outcome_ordinal integer,
    demand integer,
    cursor_before bigint,
    cursor_after bigint,
    ring_position bigint,
    scope_key text,
    disposition text,
    outcome_count integer,
    epoch_delta integer
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The statements below take arrays and per-visit scopes whose values do
    -- not change the right plan; replanning them on every call would cost
    -- more than running them.
    set plan_cache_mode = force_generic_plan
as $$
declare
    c_inspections constant integer := 32;
    c_grant_outcomes constant integer := 8;
    c_frozen constant integer := 16;
    -- A class whose head must be found freezes its first K / 4 rows ahead
    -- of the rest, so up to three rows held by other transactions can hand
    -- the head's place to the next; the other 8 frozen ids still cover the
    -- Q - 2 further outcomes the walk may take.
    c_class_reserve constant integer := 4;
    -- The first ring window of a call is this many positions, and never
    -- more than the demand left: a call that fills its demand within a few
    -- more visits probes few positions it never reaches, and a call over
    -- dormant positions reads the rest of its inspections as a second
    -- window.
    c_first_window constant integer := 4;
    -- The wake sweep unparks at most this many partitions per call: each is
    -- one schedule row update under the policy lock, so a call pays at most
    -- 64 extra row writes, and a burst of N simultaneous wakes is drained in
    -- ceil(N / 64) calls, earliest first.
    c_wake_batch constant integer := 64;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_default_cap integer;
    v_initialized_at timestamptz;
    v_park boolean;
    v_domain_paused boolean;
    -- The domain's default rate (docket_rate_step of its limit and period,
    -- and burst steps of tolerance); null steps mean no default rate.
    v_default_rate_step interval;
    v_default_rate_tolerance interval;
    v_error text;
    v_woken integer;
    v_park_probe bigint;
    v_parked boolean;
    v_parked_until timestamptz;

    v_call_token uuid;
    v_xid bigint;
    v_cursor bigint;
    v_remaining integer := p_demand;
    v_visit integer := 0;
    -- An empty class counts as served, so it never withholds a slot.
    v_served_ready boolean := true;
    v_served_expired boolean := true;

    v_position bigint;
    v_scope text;
    -- The current ring window in visit order: its positions, their scopes
    -- and whether the window's probe found a page; the next entry to visit;
    -- the visited entry (null for a stepped visit); and the last entry of the
    -- empty run whose partitions are locked, with the scopes it locked.
    v_window integer;
    v_win_positions bigint[] := '{}';
    v_win_scopes text[] := '{}';
    v_win_pages boolean[] := '{}';
    v_win_next integer := 1;
    v_win_index integer;
    v_run_end integer := 0;
    v_run_scopes text[];
    v_run_locked text[];
    v_run_paused text[];
    v_cursor_before bigint;
    v_override integer;
    v_paused boolean;
    v_has_page boolean;
    v_cap integer;
    -- The visited partition's rate: its spacing (null without a rate), its
    -- tolerance, its stored time on entry, and whether the FIFO head in turn
    -- met no token.
    v_part_rate_limit integer;
    v_part_rate_period interval;
    v_part_rate_burst integer;
    v_part_rate_unlimited boolean;
    v_rate_step interval;
    v_rate_tolerance interval;
    v_rate_tat timestamptz;
    v_rate_promoted integer;
    v_rate_denied boolean;
    v_token_at timestamptz;
    v_admitted bigint;
    v_limit integer;
    v_frozen integer;
    v_candidate record;
    v_class text;
    v_walk_served_ready boolean;
    v_walk_served_expired boolean;
    v_walk_remaining integer;
    v_queue_no integer;
    v_next_queue integer;
    v_lead boolean;
    v_lead_locked boolean;
    v_withheld boolean;
    v_no_slot boolean;
    v_take docket_claim_pending[];
    v_kept docket_claim_pending[];
    v_item docket_claim_pending;
    v_promote_ids bigint[];
    v_moved_ids bigint[];
    v_refused_ids bigint[];
    v_visit_outcomes integer;
    v_disposition text;

    -- Chosen but unwritten outcomes in call order, each with what its
    -- outcome row reports of its visit, and one scope entry per grant.
    v_pending docket_claim_pending[] := '{}';
    v_pending_grants text[] := '{}';
    -- Each grant's partition rate time after it, element for element.
    v_pending_tats timestamptz[] := '{}';
    v_written integer := 0;
    -- The full-ring walk steps until a visit ends without an outcome.
    v_stepping boolean := true;
begin
    -- The argument checks, the transaction contract and the lock wait cap,
    -- shared with Legacy.
    v_precheck := docket_claim_precheck('docket_tenant_fair_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    <<claim>>
    begin
        -- A free policy row is taken without waiting, which keeps the
        -- uncontended call out of the subtransaction of an exception block;
        -- only a held row is waited for, within the lock wait the precheck
        -- set.
        -- statement policy_lock
        select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant,
               docket_rate_step(p.rate_limit, p.rate_period),
               docket_rate_step(p.rate_limit, p.rate_period) * p.rate_burst, p.paused
          into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park,
               v_default_rate_step, v_default_rate_tolerance, v_domain_paused
          from docket_claim_policy p
         where p.id = 1
           for update skip locked;
        -- end statement
        v_policy_found := found;
        if not v_policy_found then
            begin
                -- statement policy_wait
                select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant,
                       docket_rate_step(p.rate_limit, p.rate_period),
                       docket_rate_step(p.rate_limit, p.rate_period) * p.rate_burst, p.paused
                  into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park,
                       v_default_rate_step, v_default_rate_tolerance, v_domain_paused
                  from docket_claim_policy p
                 where p.id = 1
                   for update;
                -- end statement
                v_policy_found := found;
            exception when lock_not_available then
                v_error := 'lock_contention';
            end;
        end if;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode = 'legacy' and v_initialized_at is null then
                v_error := 'not_initialized';
            elsif v_mode is distinct from 'tenant_fair' then
                v_error := 'inactive_engine';
            elsif v_default_cap is null or v_default_cap < 1 or v_initialized_at is null
                    or v_cursor is null or v_cursor < 0 or v_park is null then
                v_error := 'malformed_policy';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;
        -- A paused domain (docket_claim_policy.paused, PauseDomain) admits
        -- and leases nothing: the call returns no row, visits nothing and
        -- leaves the cursor, the wake sweep and every partition as they are;
        -- holders of its claimed runs commit as usual. The engine interlock
        -- above still refuses a call through the inactive engine first.
        exit claim when v_domain_paused;

        -- Wake by time, before the walk so that this call already visits the
        -- partitions whose time has come. A row some writer holds is skipped
        -- rather than waited for (claim never waits on a schedule row) and
        -- stays due, so a later call unparks it, unless that writer wakes it
        -- itself (wake by write). Only claim calls park and
        -- sweep, and they serialize on the policy row, so no park can
        -- interleave with this statement.
        if v_park then
            -- statement wake_sweep
            with due as (
                select s.scope_key
                  from docket_claim_schedule s
                 where s.parked_until <= p_now
                 order by s.parked_until
                 limit c_wake_batch
                   for no key update skip locked
            )
            update docket_claim_schedule s
               set parked_until = null
             where s.scope_key = any (array(select d.scope_key from due d));
            -- end statement
            get diagnostics v_woken = row_count;
        end if;

        -- Class reservation only protects classes that have work somewhere:
        -- reserving an empty class would withhold the last slot of every
        -- call and force all S inspections for nothing.
        -- Each probe reads the oldest entry of the ready or expired index;
        -- ordering keeps the planner on that index however many rows match.
        -- Work of a paused partition is no work here: no visit could serve
        -- it, so reserving a slot for it would only withhold one from the
        -- others. Entries of paused partitions at the head of the index are
        -- stepped over, each checked in docket_claim_partitions_paused_idx.
        -- The expired class is probed in two steps. The first reads the
        -- domain's oldest claim of all, in docket_runs_expired_idx, the one
        -- index whose predicate is the claimed state and whose order is the
        -- statement's, so it reads one entry whatever the statistics say
        -- (as Legacy's probe does): while no claim has
        -- expired, the common case, the class is empty and nothing else is
        -- read. Only when some claim has expired does the second step look
        -- for one that is admitted and outside a paused partition. A single
        -- statement asking that at once could also be served by the
        -- admitted indexes, and with statistics taken before the domain's
        -- claims piled up a generic plan chose one of them and filtered
        -- every live claim on each call.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                       and not exists (select from docket_claim_partitions pa
                                        where pa.scope_key = r.scope_key and pa.paused)
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
            if not v_served_expired then
                -- statement expired_probe
                select (select r.id from docket_runs r
                         where docket_run_marked_claimed(r)
                           and r.claimed_at < p_cutoff
                           and not exists (select from docket_claim_partitions pa
                                            where pa.scope_key = r.scope_key and pa.paused)
                         order by r.claimed_at, r.id
                         limit 1) is null
                  into v_served_expired;
                -- end statement
            end if;
        end if;

        -- Only trace rows identify the call; production rows leave it null.
        if p_trace then
            v_call_token := gen_random_uuid();
        end if;

        loop
            v_position := null;
            v_win_index := null;
            if v_visit < c_inspections and v_remaining > 0 then
                -- Discovery reads ring membership through MVCC and never
                -- locks a schedule row. Parked mode walks the awake ring
                -- through its own index, one keyset step past the
                -- call-local cursor at a time, wrapping to the smallest
                -- position.
                if v_park then
                    -- statement ring_step_awake
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.parked_until is null
                       and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap_awake
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring and s.parked_until is null
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                elsif v_stepping then
                    -- The full-ring walk's step: the same keyset step
                    -- through the whole ring.
                    -- statement ring_step
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                else
                    if v_win_next > cardinality(v_win_positions) then
                        -- The next window: the distinct ring positions that
                        -- the next steps reach, strictly after the cursor
                        -- and then wrapping once to the smallest position,
                        -- never more than the inspections left. Each comes
                        -- with the probe the partition lock statement makes
                        -- (one per page), taken in this statement's
                        -- snapshot; a wrap past the window reads a new one,
                        -- which may revisit positions.
                        v_window := least(c_inspections - v_visit,
                                          case when cardinality(v_win_positions) = 0
                                               then least(c_first_window, v_remaining)
                                               else c_inspections end);
                        -- statement ring_window
                        select coalesce(array_agg(w.pos order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.scope order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.has_page order by w.lap, w.pos), '{}')
                          into v_win_positions, v_win_scopes, v_win_pages
                          from (select n.pos, n.scope, n.lap,
                                       coalesce(ar.found or qr.found or ex.found, false) as has_page
                                  from ((select s.ring_position as pos, s.scope_key as scope, 0 as lap
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position > v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        union all
                                        (select s.ring_position, s.scope_key, 1
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position <= v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        order by lap, pos
                                        limit v_window) as n
                                  -- One probe per page and position, each a
                                  -- lateral join and not an EXISTS in the
                                  -- select list: PostgreSQL 13 plans such an
                                  -- EXISTS with a hashed alternative that
                                  -- reads every due run of the domain.
                                  -- docket_runs_admitted_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as ar on true
                                  -- docket_runs_queued_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as qr on true
                                  -- docket_runs_admitted_claimed_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                                                      order by r.claimed_at, r.id
                                                      limit 1) as ex on true) as w;
                        -- end statement
                        v_win_next := 1;
                        v_run_end := 0;
                    end if;
                    if v_win_next <= cardinality(v_win_positions) then
                        v_win_index := v_win_next;
                        v_win_next := v_win_next + 1;
                        v_position := v_win_positions[v_win_index];
                        v_scope := v_win_scopes[v_win_index];
                    end if;
                end if;
            end if;

            -- The chosen outcomes are written when the call ends, and before
            -- a wrap revisits a partition that still has unwritten ones.
            if v_position is null or v_scope = any (v_pending_grants) then
                if cardinality(v_pending) = 0 and v_position is null and v_visit > 0 then
                    -- A call without outcomes only moves the cursor; the
                    -- write below would open every index of docket_runs
                    -- for nothing.
                    -- statement cursor_move
                    update docket_claim_policy p
                       set scan_ring_position = v_cursor
                     where p.id = 1;
                    -- end statement
                elsif cardinality(v_pending) > 0 then
                    -- One set-based mutation of the chosen rows, the epoch
                    -- of each grant and, at the end, the cursor. Every row
                    -- is locked by this call and was rechecked, so each is
                    -- written. A batch holds at most one grant per
                    -- partition, because a revisit writes the batch first.
                    -- The rows carry their visit and call-wide outcome
                    -- ordinals; callers order by those, not by arrival.
                    return query
                        -- statement write
                        with chosen as (
                            select t.id, t.kind, t.poison, t.eligible, t.visit, t.cursor_before,
                                   t.ring_position, t.scope_key, t.ordinal
                              from unnest(v_pending) with ordinality
                                       as t(id, kind, poison, eligible, visit, cursor_before,
                                            ring_position, scope_key, ordinal)
                        ), mutated as (
                            update docket_runs r
                               set claim_token = case when c.poison then null else gen_random_uuid() end,
                                   claimed_at = case when c.poison then null else p_now end,
                                   wake_at = null,
                                   claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                                   tenant_admitted_at = case
                                       when c.poison then null
                                       when c.kind = 'queued_ready' then p_now
                                       else r.tenant_admitted_at end,
                                   poisoned_at = case when c.poison then p_now end,
                                   poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                                   updated_at = now()
                              from chosen c
                             where r.id = c.id
                            returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash,
                                      r.checkpoint_seq, r.claim_token, r.claimed_at,
                                      r.claim_attempts, r.poisoned_at, r.poison_reason,
                                      c.kind, c.eligible, c.visit, c.cursor_before, c.ring_position,
                                      c.scope_key as visit_scope, c.ordinal
                        ), granted as (
                            -- Outcome-backed service evidence: once per grant.
                            update docket_claim_partitions pa
                               set admission_epoch = pa.admission_epoch + 1,
                                   rate_tat = v_pending_tats[array_position(v_pending_grants, pa.scope_key)]
                             where pa.scope_key = any (v_pending_grants)
                        ), moved as (
                            update docket_claim_policy p
                               set scan_ring_position = v_cursor
                             where p.id = 1 and v_position is null
                        )
                        select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id,
                               m.graph_hash, m.checkpoint_seq, m.claim_token, m.claimed_at,
                               m.claim_attempts, m.poisoned_at, m.poison_reason, m.kind,
                               m.eligible, v_call_token, v_xid, m.visit,
                               (v_written + m.ordinal)::integer, p_demand,
                               m.cursor_before, m.ring_position, m.ring_position, m.visit_scope,
                               case m.kind
                                   when 'admitted_ready' then 'admitted_reacquisition'
                                   when 'queued_ready' then 'queued_promotion'
                                   else 'expired_recovery' end,
                               null::integer, null::integer
                          from mutated m;
                        -- end statement
                    v_written := v_written + cardinality(v_pending);
                    v_pending := '{}';
                    v_pending_grants := '{}';
                    v_pending_tats := '{}';
                end if;
                exit when v_position is null;
            end if;

            v_visit := v_visit + 1;
            if v_xid is null then
                v_xid := txid_current();
            end if;
            v_cursor_before := v_cursor;
            v_cursor := v_position;
            v_visit_outcomes := 0;
            v_parked := false;
            v_parked_until := null;

            if v_win_index is not null and not v_win_pages[v_win_index] then
                -- A run of consecutive window positions whose probe found
                -- no page is locked when the walk reaches its first one,
                -- with the partition lock of each, without waiting; the
                -- window's probe stands for each lock statement's probe.
                -- The run ends before the next position with a page, so
                -- no visit in between can end the call: every partition
                -- locked here is one the walk inspects.
                if v_win_index > v_run_end then
                    v_run_end := v_win_index;
                    while v_run_end < cardinality(v_win_pages) and not v_win_pages[v_run_end + 1] loop
                        v_run_end := v_run_end + 1;
                    end loop;
                    v_run_scopes := v_win_scopes[v_win_index:v_run_end];
                    -- The lock returns each partition's newest committed
                    -- version, so a pause committed after the window's
                    -- snapshot is seen here.
                    -- statement empty_run_lock
                    select coalesce(array_agg(l.scope_key), '{}'),
                           coalesce(array_agg(l.scope_key) filter (where l.paused), '{}')
                      into v_run_locked, v_run_paused
                      from (select pa.scope_key, pa.paused
                              from docket_claim_partitions pa
                             where pa.scope_key = any (v_run_scopes)
                               for no key update skip locked) as l;
                    -- end statement
                    if not p_trace and v_run_end > v_win_index then
                        -- Without trace rows the rest of the run needs no
                        -- step of its own: each of its positions is one
                        -- inspection without an outcome, so the walk counts
                        -- them and moves the cursor to the run's last one.
                        -- No position of the run can hold unwritten
                        -- outcomes of this call: those rows are still due
                        -- in every snapshot until written, so the window's
                        -- probe would have found its page.
                        v_visit := v_visit + (v_run_end - v_win_index);
                        v_cursor := v_win_positions[v_run_end];
                        v_win_next := v_run_end + 1;
                    end if;
                end if;
                v_disposition := case when v_scope = any (v_run_paused) then 'paused'
                                      when v_scope = any (v_run_locked) then 'empty_page'
                                      else 'partition_lock_skip' end;
            else
                -- The lock statement also probes the three pages, so a visit
                -- with nothing due and nothing expired ends as empty_page
                -- without the candidate statement. Its snapshot predates the
                -- lock, which for an empty page only means the visit saw the
                -- scope a moment earlier; a page found here is read again, in
                -- a snapshot taken after the lock, by the candidate statement.
                -- A paused partition's pages are not probed: the case
                -- evaluates its branch only for an unpaused one. A position
                -- the ring window's probe found a page at is not probed
                -- again: the candidate statement reads its pages anyway, and
                -- a page gone since ends the visit there as empty_page, the
                -- disposition this probe would have given (the full-ring walk
                -- never parks, so the probe decides nothing else).
                -- statement partition_lock
                select pa.max_active, pa.paused, pa.rate_limit, pa.rate_period, pa.rate_burst,
                       pa.rate_unlimited, pa.rate_tat,
                       case when pa.paused then false when v_win_index is not null then true else
                       (select true from docket_runs r
                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                         order by r.wake_at, r.id
                         limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                            order by r.wake_at, r.id
                            limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                            order by r.claimed_at, r.id
                            limit 1) is not null
                       end
                  into v_override, v_paused, v_part_rate_limit, v_part_rate_period, v_part_rate_burst,
                       v_part_rate_unlimited, v_rate_tat, v_has_page
                  from docket_claim_partitions pa
                 where pa.scope_key = v_scope
                   for no key update skip locked;
                -- end statement

                if not found then
                    v_disposition := 'partition_lock_skip';
                elsif v_paused then
                    v_disposition := 'paused';
                elsif not v_has_page then
                    v_disposition := 'empty_page';
                    if v_park then
                        -- Park: first the schedule row, without waiting. A
                        -- writer that holds it has not committed, and its own
                        -- write will set the row right, so the partition stays
                        -- awake. Once the lock is held, a writer that could make
                        -- a row of the scope eligible either committed before it
                        -- (the next statement's snapshot, taken after the lock,
                        -- sees its row) or waits for this call and writes the
                        -- schedule row after the park. The dormancy probe of
                        -- the lock statement above is older than the lock, so
                        -- the park re-checks dormancy in its own snapshot.
                        -- statement park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- Dormant: no claimed running row (an expired steal
                            -- depends on the caller's cutoff, a live claim will
                            -- be released) and no healthy unclaimed running row
                            -- due at p_now. Parked until the earliest wake_at of
                            -- the scope's healthy unclaimed running rows, else
                            -- for good (a write wakes it).
                            -- A partition whose last unfinished run finished
                            -- after the probe has left the ring: it is not
                            -- walked, and its next run makes it a member again,
                            -- so it is not parked.
                            -- statement park
                            update docket_claim_schedule s
                               set parked_until = coalesce(least(
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1),
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1)), 'infinity')
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                     order by r.claimed_at, r.id
                                     limit 1) is null
                               and not exists (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_unmarked_claimed(r))
                            returning s.parked_until
                              into v_parked_until;
                            -- end statement
                            v_parked := found;
                        end if;
                    end if;
                else
                    v_cap := coalesce(v_override, v_default_cap);
                    v_limit := least(c_grant_outcomes, v_remaining);
                    v_admitted := null;
                    v_frozen := 0;
                    v_no_slot := false;
                    v_lead_locked := false;
                    v_withheld := false;
                    v_walk_served_ready := v_served_ready;
                    v_walk_served_expired := v_served_expired;
                    v_walk_remaining := v_remaining;
                    v_queue_no := 0;
                    v_next_queue := 1;
                    v_take := '{}';
                    v_promote_ids := '{}';
                    v_moved_ids := '{}';
                    v_refused_ids := '{}';
                    -- The partition's own rate, else none when it is exempt,
                    -- else the domain's default.
                    if v_part_rate_limit is not null then
                        v_rate_step := docket_rate_step(v_part_rate_limit, v_part_rate_period);
                        v_rate_tolerance := v_rate_step * v_part_rate_burst;
                    elsif v_part_rate_unlimited then
                        v_rate_step := null;
                        v_rate_tolerance := null;
                    else
                        v_rate_step := v_default_rate_step;
                        v_rate_tolerance := v_default_rate_tolerance;
                    end if;
                    v_rate_promoted := 0;
                    v_rate_denied := false;

                    -- One statement after the partition lock, so its snapshot
                    -- (admitted count and pages) sees every grant committed
                    -- before the lock. The pages are MVCC reads: admitted-ready
                    -- and expired rows up to K each, and the queued FIFO up to
                    -- this grant's limit, since promotion is contiguous from the
                    -- head and could never reach further. They are ranked, at
                    -- most K ids are frozen, and exactly those are locked without
                    -- waiting, in rank order. A lock returns the newest committed
                    -- version of its row, which the walk rechecks.
                    --
                    -- Freezing: the first K / 4 rows of each class whose head
                    -- matters (with demand >= 2 a class not yet served in this
                    -- call, with demand 1 both) first; admitted before queued;
                    -- with demand 1 the preferred class; then the FIFO order for
                    -- queued rows, and poison first, eligible time and id for the
                    -- others. A class's rows are its admitted-ready rows then its
                    -- queued FIFO (ready), resp. its expired rows, each by
                    -- eligible time and id. Queued rows rank among themselves in
                    -- FIFO order, so the frozen ones are a prefix of the FIFO.
                    --
                    -- The walk meets the rows after locking: admitted before
                    -- queued; then each class head whose place matters, chosen
                    -- among the rows this visit locked and found fresh (the
                    -- oldest admitted one of its class); with demand 1 the
                    -- preferred class; poison first, eligible time and id. The
                    -- queued rows come last in FIFO order and are numbered 1, 2,
                    -- ...; a queued row held elsewhere or stale still takes its
                    -- number, so it blocks every promotion behind it.
                    --
                    -- The admitted count only matters when a queued row could
                    -- meet the cap. Admitted and queued rows are both unfinished,
                    -- so while the scope has no more unfinished runs than its
                    -- cap no promotion of this visit can reach it, and the count
                    -- is skipped. Counting stops at cap + Q, beyond which at most
                    -- Q admitted poisons could never bring it under the cap.
                    for v_candidate in
                        -- statement candidates
                        with pages as (
                            -- Admitted-ready: docket_runs_admitted_ready_idx.
                            (select r.id, 'admitted_ready'::text as kind, 'ready'::text as class,
                                    r.wake_at as eligible, r.claim_attempts >= p_max_attempts as poison
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit c_frozen)
                            union all
                            -- Queued-ready, the FIFO: docket_runs_queued_ready_idx.
                            (select r.id, 'queued_ready', 'ready',
                                    r.wake_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit v_limit)
                            union all
                            -- Expired admitted claims: docket_runs_admitted_claimed_idx.
                            (select r.id, 'expired', 'expired',
                                    r.claimed_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                              order by r.claimed_at, r.id
                              limit c_frozen)
                        ), ranked as (
                            select p.id, p.kind, p.class, p.eligible,
                                   case when row_number() over (partition by p.class
                                                 order by p.kind = 'queued_ready', p.eligible, p.id) <= c_class_reserve
                                             and (p_demand = 1 or not (case p.class
                                                 when 'ready' then v_served_ready
                                                 else v_served_expired end))
                                        then 0 else 1 end as reserved,
                                   case when p_demand = 1 and p.class <> p_preference then 1 else 0 end
                                       as preference_last,
                                   case when p.kind <> 'queued_ready' and p.poison then 0 else 1 end
                                       as poison_first
                              from pages p
                        ), frozen as (
                            select h.id, h.kind, h.class, h.eligible, h.preference_last, h.poison_first
                              from ranked h
                             order by h.reserved, h.kind = 'queued_ready', h.preference_last,
                                      h.poison_first, h.eligible, h.id
                             limit c_frozen
                        ), locked as (
                            -- Each frozen id by its primary key (docket_runs_pkey), in
                            -- rank order, without waiting; the locked version is the
                            -- newest committed one, rechecked against its kind.
                            select f.id, f.kind, f.class, f.eligible, f.preference_last, f.poison_first,
                                   l.id is not null as is_locked,
                                   coalesce(l.scope_key = v_scope
                                       and case f.kind
                                           when 'expired' then l.marked_claimed and l.claimed_at < p_cutoff
                                           when 'admitted_ready' then l.marked_unclaimed and l.wake_at <= p_now
                                           else l.unmarked_unclaimed and l.wake_at <= p_now
                                           end, false) as is_fresh,
                                   coalesce(l.claim_attempts >= p_max_attempts, false) as is_poison,
                                   case when f.kind = 'expired' then l.claimed_at else l.wake_at end
                                       as locked_eligible,
                                   f.kind = 'queued_ready' and l.wake_at is distinct from f.eligible as is_moved
                              from frozen f
                              left join lateral (
                                    select r.id, r.scope_key, r.claimed_at, r.wake_at, r.claim_attempts,
                                           docket_run_marked_claimed(r) as marked_claimed,
                                           docket_run_marked_unclaimed(r) as marked_unclaimed,
                                           docket_run_unmarked_unclaimed(r) as unmarked_unclaimed
                                      from docket_runs r
                                     where r.id = f.id
                                       for update skip locked) as l on true
                        ), judged as (
                            select k.id, k.kind, k.is_locked, k.is_fresh, k.is_poison, k.locked_eligible,
                                   k.is_moved, k.preference_last, k.poison_first, k.eligible,
                                   -- The scope's count (docket_claim_schedule_pkey), and its
                                   -- admitted rows only when it has more unfinished runs
                                   -- than its cap: the unclaimed ones on the admitted-ready
                                   -- page's index and the claimed ones on the expired page's,
                                   -- each read up to the bound, so the sum read up to it is
                                   -- exact.
                                   case when (select s.unfinished_count
                                                from docket_claim_schedule s
                                               where s.scope_key = v_scope) > v_cap
                                        then least((select count(*)
                                                      from (select
                                                              from docket_runs r
                                                             where r.scope_key = v_scope
                                                               and docket_run_marked_unclaimed(r)
                                                             limit v_cap::bigint + c_grant_outcomes) as a)
                                                   + (select count(*)
                                                        from (select
                                                                from docket_runs r
                                                               where r.scope_key = v_scope
                                                                 and docket_run_marked_claimed(r)
                                                               limit v_cap::bigint + c_grant_outcomes) as c),
                                                   v_cap::bigint + c_grant_outcomes)
                                        else 0 end as admitted,
                                   -- The class heads are chosen among the rows this visit
                                   -- locked and rechecked: the oldest fresh admitted row of
                                   -- each class, so a head held elsewhere hands its place to
                                   -- the next row of its class.
                                   coalesce(case when k.kind <> 'queued_ready' and k.is_fresh
                                                      and (p_demand = 1 or not (case k.class
                                                          when 'ready' then v_served_ready
                                                          else v_served_expired end))
                                                 then row_number() over (
                                                          partition by k.class, k.kind <> 'queued_ready' and k.is_fresh
                                                          order by k.eligible, k.id) = 1
                                                 end, false) as is_head
                              from locked k
                        )
                        select j.id, j.kind, j.admitted, j.is_locked, j.is_fresh, j.is_poison,
                               j.locked_eligible as eligible, j.is_moved
                          from judged j
                         order by j.kind = 'queued_ready', j.is_head desc, j.preference_last,
                                  j.poison_first, j.eligible, j.id
                        -- end statement
                    loop
                        v_frozen := v_frozen + 1;
                        if v_admitted is null then
                            v_admitted := v_candidate.admitted;
                            v_no_slot := v_admitted >= v_cap;
                        end if;
                        if v_candidate.kind = 'queued_ready' then
                            v_queue_no := v_queue_no + 1;
                        end if;
                        -- The lead rows are those an outcome could come from:
                        -- every admitted row and the queued FIFO head.
                        v_lead := v_candidate.kind <> 'queued_ready' or v_queue_no = 1;
                        continue when not v_candidate.is_locked;
                        if v_lead then
                            v_lead_locked := true;
                        end if;
                        continue when cardinality(v_take) >= v_limit;

                        v_class := case when v_candidate.kind = 'expired' then 'expired' else 'ready' end;
                        -- Last-slot rule: the final outcome of the call is kept
                        -- for a nonempty class that is still unserved.
                        if v_walk_remaining = 1 and p_demand >= 2
                                and not (case v_class when 'ready' then v_walk_served_expired
                                         else v_walk_served_ready end) then
                            if v_lead and v_candidate.is_fresh then
                                v_withheld := true;
                            end if;
                            continue;
                        end if;

                        if v_candidate.kind = 'queued_ready' then
                            -- Promotion is contiguous from the FIFO head: a head
                            -- that is missing, stale or without a slot blocks
                            -- everything behind it in this visit.
                            continue when v_queue_no <> v_next_queue;
                            continue when not v_candidate.is_fresh;
                            continue when v_admitted >= v_cap;
                            -- Rate: the head in turn needs a token as it needs
                            -- a slot, a queued poison too, though like the slot
                            -- it takes none. The rate time before this
                            -- promotion is the stored one, moved one step past
                            -- greatest(stored, now) by each promotion so far.
                            if v_rate_step is not null
                                    and p_now < (case when v_rate_promoted = 0 then v_rate_tat
                                                      else greatest(v_rate_tat, p_now) + v_rate_step * v_rate_promoted
                                                 end) - v_rate_tolerance then
                                v_rate_denied := true;
                                continue;
                            end if;
                            v_next_queue := v_next_queue + 1;
                            v_promote_ids := v_promote_ids || v_candidate.id;
                            if v_candidate.is_moved then
                                v_moved_ids := v_moved_ids || v_candidate.id;
                            end if;
                            if not v_candidate.is_poison then
                                v_admitted := v_admitted + 1;
                                v_rate_promoted := v_rate_promoted + 1;
                            end if;
                        else
                            continue when not v_candidate.is_fresh;
                            if v_candidate.is_poison then
                                -- An admitted poison releases its marker.
                                v_admitted := v_admitted - 1;
                            end if;
                        end if;

                        v_take := v_take || row(v_candidate.id, v_candidate.kind, v_candidate.is_poison,
                                                v_candidate.eligible, v_visit, v_cursor_before, v_position,
                                                v_scope)::docket_claim_pending;
                        v_walk_remaining := v_walk_remaining - 1;
                        if v_class = 'ready' then
                            v_walk_served_ready := true;
                        else
                            v_walk_served_expired := true;
                        end if;
                    end loop;

                    -- A promoted row is the FIFO head of the page's snapshot by
                    -- contiguity, unless its locked version is due at another
                    -- time than the page read. Such a row is re-checked in a
                    -- fresh snapshot against every older queued row of the
                    -- scope, and refused as stale if one is not promoted by this
                    -- grant.
                    if cardinality(v_moved_ids) > 0 then
                        -- statement fifo_recheck
                        select coalesce(array_agg(r.id), '{}')
                          into v_refused_ids
                          from docket_runs r
                         where r.id = any (v_moved_ids)
                           and exists (
                               select 1
                                 from docket_runs o
                                where o.scope_key = r.scope_key and docket_run_unmarked_unclaimed(o) and o.wake_at <= p_now
                                  and (o.wake_at, o.id) < (r.wake_at, r.id)
                                  and not (o.id = any (v_promote_ids)));
                        -- end statement
                        if cardinality(v_refused_ids) > 0 then
                            v_kept := '{}';
                            foreach v_item in array v_take loop
                                continue when v_item.id = any (v_refused_ids);
                                v_kept := v_kept || v_item;
                            end loop;
                            v_take := v_kept;
                        end if;
                    end if;

                    v_visit_outcomes := cardinality(v_take);
                    if v_visit_outcomes > 0 then
                        v_pending := v_pending || v_take;
                        v_pending_grants := v_pending_grants || v_scope;
                        v_rate_promoted := 0;
                        foreach v_item in array v_take loop
                            if v_item.kind = 'expired' then
                                v_served_expired := true;
                            else
                                v_served_ready := true;
                            end if;
                            if v_item.kind = 'queued_ready' and not v_item.poison then
                                v_rate_promoted := v_rate_promoted + 1;
                            end if;
                        end loop;
                        -- The partition's rate time after the grant: each
                        -- promotion that stayed after the FIFO re-check takes
                        -- one step; the write statement stores it.
                        v_pending_tats := array_append(v_pending_tats,
                            case when v_rate_step is not null and v_rate_promoted > 0
                                 then greatest(v_rate_tat, p_now) + v_rate_step * v_rate_promoted
                                 else v_rate_tat end);
                    end if;
                    v_remaining := v_remaining - v_visit_outcomes;
                    -- Without an outcome the first cause that applies names the
                    -- visit (docs/operations.md, visit dispositions): no slot
                    -- for its frozen queued rows, a fresh lead row the last-slot
                    -- rule withheld, lead rows locked here but stale (rows the
                    -- FIFO re-check refused count so), else every lead row held
                    -- elsewhere. Each holds whatever the freezing width was.
                    v_disposition := case
                        when v_visit_outcomes > 0 then 'grant'
                        when v_frozen = 0 then 'empty_page'
                        when v_queue_no > 0 and v_no_slot then 'cap_debt_denial'
                        when v_rate_denied then 'rate_limited'
                        when v_withheld then 'denied'
                        when v_lead_locked then 'stale'
                        else 'lock_miss' end;
                    if v_disposition = 'rate_limited' and v_park then
                        -- Parked mode parks a partition whose queued head has
                        -- no token until its next token, when it is otherwise
                        -- dormant: no admitted-ready row due, no claim at all.
                        -- The next token comes at the rate time (no promotion
                        -- of this visit moved it) less the tolerance; an
                        -- admitted-ready row due earlier wakes it then. The
                        -- lock and the re-check in the park's own snapshot are
                        -- the dormant park's.
                        v_token_at := v_rate_tat - v_rate_tolerance;
                        -- statement rate_park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- statement rate_park
                            update docket_claim_schedule s
                               set parked_until = least(v_token_at,
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1))
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                     order by r.claimed_at, r.id
                                     limit 1) is null
                               and not exists (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_unmarked_claimed(r))
                            returning s.parked_until
                              into v_parked_until;
                            -- end statement
                            v_parked := found;
                        end if;
                    end if;
                end if;
            end if;

            if v_visit_outcomes = 0 then
                v_stepping := false;
            end if;

            if p_trace then
                row_kind := 'inspection';
                error_reason := null;
                run_id := null;
                tenant_id := null;
                graph_id := null;
                graph_hash := null;
                checkpoint_seq := null;
                claim_token := null;
                claimed_at := null;
                claim_attempt := case when v_park then v_woken end;
                poisoned_at := null;
                poison_reason := null;
                work_class := null;
                eligible_at := case when v_parked and v_parked_until <> 'infinity' then v_parked_until end;
                call_token := v_call_token;
                transaction_id := v_xid;
                visit_ordinal := v_visit;
                outcome_ordinal := case when v_parked then 0 end;
                demand := p_demand;
                cursor_before := v_cursor_before;
                cursor_after := v_cursor;
                ring_position := v_position;
                scope_key := v_scope;
                disposition := v_disposition;
                outcome_count := v_visit_outcomes;
                epoch_delta := case when v_visit_outcomes > 0 then 1 else 0 end;
                return next;
            end if;
        end loop;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

-- Unique runs (begin). A run inserted with a unique key holds it, in its
-- scope and in the period bucket of its wake time (docket_unique_bucket;
-- null for a key without a period, one window of all time), while its
-- status is one of unique_statuses; docket_runs_unique_idx lets no two runs
-- hold the same key in the same scope and bucket, whichever writer inserts
-- them. The key follows the identifier rules; the columns are set only by
-- an insert, and only on a run whose status the key covers (the insert
-- status, running, among them).
alter table docket_runs
    add column unique_key text,
    add column unique_bucket timestamptz,
    add column unique_statuses text[],
    add constraint docket_runs_unique_key_check
        check (unique_key is null
               or (unique_key ~ '[^ ]' and octet_length(unique_key) <= 200
                   and unique_key !~ '[\u0001-\u001f\u007f-\u009f]')),
    add constraint docket_runs_unique_check
        check ((unique_key is null) = (unique_statuses is null)
               and (unique_bucket is null or unique_key is not null)
               and (unique_statuses is null
                    or (status = any (unique_statuses)
                        and unique_statuses <@ array['running', 'waiting', 'done', 'failed', 'cancelled']
                        and array_position(unique_statuses, null) is null)));

create unique index docket_runs_unique_idx
    on docket_runs (scope_key, unique_key, coalesce(unique_bucket, '-infinity'::timestamptz))
    where unique_key is not null;

-- include docket_unique_bucket_v1.sql
-- The window a unique run's key holds in: the start of the period bucket
-- that holds at, buckets of period_us microseconds counted from the Unix
-- epoch (UTC), or null, the one window of all time, when period_us is null.
-- Every writer of unique_bucket and every reader looking for the run that
-- holds a key calls it, so they agree on the window to the microsecond.
create or replace function docket_unique_bucket(at timestamptz, period_us bigint)
    returns timestamptz
    language plpgsql
    stable
    parallel safe
    security invoker
    set search_path from current
as $$
declare
    us bigint := round(extract(epoch from at) * 1000000)::bigint;
begin
    return to_timestamp((us - ((us % period_us) + period_us) % period_us) / 1000000.0);
end;
$$;
-- end include

-- include docket_runs_release_unique_v1.sql
-- A unique run holds its key only while its status is one of the statuses
-- its insert named (unique_statuses): a write that moves it to another
-- status clears the three unique columns, so the run leaves
-- docket_runs_unique_idx and a new run may take the key. A key is only ever
-- written by an insert, so no update can meet the unique index, and a run
-- that later returns to a covered status (an operator's retry, a resume)
-- does not take its key back.
create function docket_runs_release_unique() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    new.unique_key := null;
    new.unique_bucket := null;
    new.unique_statuses := null;
    return new;
end;
$$;
-- end include

create trigger docket_runs_release_unique_trg
    before update on docket_runs
    for each row
    when (new.unique_key is not null and not (new.status = any (new.unique_statuses)))
    execute function docket_runs_release_unique();
-- Unique runs (end).

-- Run id prefix search (Admin.SearchRuns, the console's run search): an
-- index in byte order (the "C" collation), whatever the database's
-- collation, so a prefix is one range of it (run_id collate "C" from the
-- prefix to the prefix's successor). The unique index on run_id sorts by
-- the database's collation, in which a prefix's ids need not be one range.
-- Only a comparison in the "C" collation can use this index, so a lookup of
-- an id (run_id = $1, in the database's collation) keeps the unique index
-- and its plan does not depend on which of two equal indexes the planner
-- prices lower.
create index docket_runs_run_id_prefix_idx on docket_runs (run_id collate "C");
-- end run id prefix search

-- Per-run max attempts: an override, given at insert, of the handler
-- attempts the Worker's retry policy grants the run. NULL (every run
-- inserted without one) leaves the policy's MaxAttempts; the check holds
-- any writer of a run (the generated repository, psql) to at least one
-- attempt.
alter table docket_runs
    add column max_attempts integer,
    add constraint docket_runs_max_attempts_check check (max_attempts >= 1);
-- end per-run max attempts

-- migrate:down

-- Per-run max attempts.
alter table docket_runs
    drop constraint docket_runs_max_attempts_check,
    drop column max_attempts;
-- end per-run max attempts
-- Run id prefix search.
drop index docket_runs_run_id_prefix_idx;
-- end run id prefix search

-- Unique runs (begin).
drop trigger docket_runs_release_unique_trg on docket_runs;
drop function docket_runs_release_unique();
drop function docket_unique_bucket(timestamptz, bigint);
drop index docket_runs_unique_idx;
alter table docket_runs
    drop constraint docket_runs_unique_check,
    drop constraint docket_runs_unique_key_check,
    drop column unique_statuses,
    drop column unique_bucket,
    drop column unique_key;
-- Unique runs (end).

-- include docket_run_phase_v1.sql
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
-- and for an unclaimed running run whether its tenant is paused, when it
-- is due and whether its tenant admitted it. Beyond its arguments it reads
-- the run's partition and the policy row, both by primary key.
begin
return case
    when r.status in ('done', 'failed', 'cancelled') then r.status
    when r.status = 'waiting' then 'waiting'
    when r.poisoned_at is not null then 'poisoned'
    when r.claim_token is not null then 'executing'
    -- A paused tenant's unclaimed runs wait for its resume. Only TenantFair
    -- honours the pause; under Legacy they are claimed as usual.
    when exists (select from docket_claim_partitions p where p.scope_key = r.scope_key and p.paused)
         and exists (select from docket_claim_policy pol where pol.id = 1 and pol.admission_mode = 'tenant_fair')
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
-- end include

-- include docket_legacy_claim_v1.sql
-- The Legacy admission engine: tenant-blind and oldest-first, for tenant mode
-- none. It shares the TenantFair arguments and result shape so one decoder
-- serves both, but it has no partitions, no ring, no cursor and no admission:
-- a lease never touches tenant_admitted_at (a poison clears it, because a
-- poisoned row may not hold one).
--
-- Candidates are read through two cursors with SKIP LOCKED and merged one row
-- at a time, so a call locks only the rows it takes plus at most one
-- look-ahead row per class.
--
-- The argument checks, the transaction contract and the lock wait cap are
-- those of TenantFair, shared through docket_claim_precheck. Each SQL
-- statement sits between a "-- statement NAME" and an "-- end statement"
-- line; the plan regression test reads them from this file.
create or replace function docket_legacy_claim(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean
) returns table (
    row_kind text,
    error_reason text,
    run_id text,
    tenant_id text,
    graph_id text,
    graph_hash text,
    checkpoint_seq bigint,
    claim_token uuid,
    claimed_at timestamptz,
    claim_attempt integer,
    poisoned_at timestamptz,
    poison_reason text,
    work_class text,
    eligible_at timestamptz,
    call_token uuid,
    transaction_id bigint,
    visit_ordinal integer,
    outcome_ordinal integer,
    demand integer,
    cursor_before bigint,
    cursor_after bigint,
    ring_position bigint,
    scope_key text,
    disposition text,
    outcome_count integer,
    epoch_delta integer
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The statements below take arrays and per-visit scopes whose values do
    -- not change the right plan; replanning them on every call would cost
    -- more than running them.
    set plan_cache_mode = force_generic_plan
as $$
declare
    c_call_outcomes constant integer := 256;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_error text;

    v_limit integer := least(p_demand, c_call_outcomes);
    v_remaining integer := least(p_demand, c_call_outcomes);
    v_served_ready boolean := true;
    v_served_expired boolean := true;
    v_ready_rows refcursor;
    v_expired_rows refcursor;
    v_have_ready boolean := false;
    v_have_expired boolean := false;
    v_ready_done boolean := false;
    v_expired_done boolean := false;
    v_ready_id bigint;
    v_ready_eligible timestamptz;
    v_ready_poison boolean;
    v_ready_marked boolean;
    v_expired_id bigint;
    v_expired_eligible timestamptz;
    v_expired_poison boolean;
    v_pick_ready boolean;
    v_take_ids bigint[] := '{}';
    v_take_kinds text[] := '{}';
    v_take_poison boolean[] := '{}';
    v_take_eligible timestamptz[] := '{}';
    v_call_token uuid;
    v_xid bigint;
begin
    -- The same transaction contract as TenantFair, so neither engine can
    -- run where the other would refuse.
    v_precheck := docket_claim_precheck('docket_legacy_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    <<claim>>
    begin
        -- A share lock is enough to exclude TenantFair, which takes the row
        -- for update, while Legacy callers still run side by side.
        begin
            -- statement policy_share
            select p.admission_mode into v_mode
              from docket_claim_policy p
             where p.id = 1
               for share;
            -- end statement
            v_policy_found := found;
        exception when lock_not_available then
            v_error := 'lock_contention';
        end;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode is distinct from 'legacy' then
                v_error := 'inactive_engine';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;

        -- An empty class counts as served; each probe reads the oldest
        -- entry of the ready or expired index.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
        end if;

        -- The domain's due rows by (wake_at, id), docket_runs_ready_idx.
        open v_ready_rows for
            -- statement ready_rows
            select r.id, r.wake_at, r.claim_attempts >= p_max_attempts, r.tenant_admitted_at is not null
              from docket_runs r
             where docket_run_unclaimed(r) and r.wake_at <= p_now
             order by r.wake_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement
        -- Its claims by (claimed_at, id), docket_runs_expired_idx.
        open v_expired_rows for
            -- statement expired_rows
            select r.id, r.claimed_at, r.claim_attempts >= p_max_attempts
              from docket_runs r
             where docket_run_claimed(r) and r.claimed_at < p_cutoff
             order by r.claimed_at, r.id
             limit v_limit
               for update skip locked;
            -- end statement

        loop
            exit when cardinality(v_take_ids) >= v_limit;
            -- Demand one reads the other class only when the preferred one
            -- has nothing, so it locks no row it will not take.
            if not v_have_ready and not v_ready_done
                    and (p_demand >= 2 or p_preference is distinct from 'expired' or v_expired_done) then
                fetch v_ready_rows into v_ready_id, v_ready_eligible, v_ready_poison, v_ready_marked;
                v_have_ready := found;
                v_ready_done := not found;
            end if;
            if not v_have_expired and not v_expired_done
                    and (p_demand >= 2 or p_preference is distinct from 'ready' or v_ready_done) then
                fetch v_expired_rows into v_expired_id, v_expired_eligible, v_expired_poison;
                v_have_expired := found;
                v_expired_done := not found;
            end if;

            if v_have_ready and v_have_expired then
                -- Demand >= 2 takes an unserved class head first; otherwise
                -- (demand one reads both only without a preference) the
                -- older eligible time wins.
                v_pick_ready := case
                    when p_demand >= 2 and v_served_ready <> v_served_expired then not v_served_ready
                    else (v_ready_eligible, v_ready_id) <= (v_expired_eligible, v_expired_id) end;
            elsif v_have_ready then
                v_pick_ready := true;
            elsif v_have_expired then
                v_pick_ready := false;
            elsif v_ready_done and v_expired_done then
                exit;
            else
                continue;
            end if;

            -- Last-slot rule: the final outcome is kept for a nonempty class
            -- that is still unserved; that class has no row left here.
            exit when p_demand >= 2 and v_remaining = 1
                and not (case when v_pick_ready then v_served_expired else v_served_ready end);

            if v_pick_ready then
                v_take_ids := v_take_ids || v_ready_id;
                v_take_kinds := v_take_kinds
                    || case when v_ready_marked then 'admitted_ready' else 'queued_ready' end;
                v_take_poison := v_take_poison || v_ready_poison;
                v_take_eligible := v_take_eligible || v_ready_eligible;
                v_served_ready := true;
                v_have_ready := false;
            else
                v_take_ids := v_take_ids || v_expired_id;
                v_take_kinds := v_take_kinds || 'expired'::text;
                v_take_poison := v_take_poison || v_expired_poison;
                v_take_eligible := v_take_eligible || v_expired_eligible;
                v_served_expired := true;
                v_have_expired := false;
            end if;
            v_remaining := v_remaining - 1;
        end loop;
        close v_ready_rows;
        close v_expired_rows;

        if cardinality(v_take_ids) > 0 then
            v_call_token := gen_random_uuid();
            v_xid := txid_current();
            return query
                -- statement write
                with chosen as (
                    select t.id, t.kind, t.poison, t.eligible, t.walk
                      from unnest(v_take_ids, v_take_kinds, v_take_poison, v_take_eligible)
                               with ordinality as t(id, kind, poison, eligible, walk)
                ), mutated as (
                    update docket_runs r
                       set claim_token = case when c.poison then null else gen_random_uuid() end,
                           claimed_at = case when c.poison then null else p_now end,
                           wake_at = null,
                           claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                           tenant_admitted_at = case when c.poison then null else r.tenant_admitted_at end,
                           poisoned_at = case when c.poison then p_now end,
                           poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                           updated_at = now()
                      from chosen c
                     where r.id = c.id
                    returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash, r.checkpoint_seq,
                              r.claim_token, r.claimed_at, r.claim_attempts, r.poisoned_at,
                              r.poison_reason, c.kind, c.eligible, c.walk
                )
                select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id, m.graph_hash,
                       m.checkpoint_seq, m.claim_token, m.claimed_at, m.claim_attempts,
                       m.poisoned_at, m.poison_reason, m.kind, m.eligible, v_call_token, v_xid,
                       0, (row_number() over (order by m.walk))::integer, p_demand,
                       null::bigint, null::bigint, null::bigint, null::text,
                       case when m.kind = 'expired' then 'expired_recovery' end,
                       null::integer, null::integer
                  from mutated m
                 order by m.walk;
                -- end statement
        end if;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

alter table docket_claim_policy drop column paused;
-- A Legacy domain whose version moved while uninitialized goes back to the
-- version V2 requires of it.
update docket_claim_policy set policy_version = 0 where initialized_at is null;
alter table docket_claim_policy
    drop constraint docket_claim_policy_shape_check,
    add constraint docket_claim_policy_shape_check
        check ((initialized_at is null) = (max_active is null)
               and (initialized_at is not null or (configured_max_active is null and policy_version = 0)));

-- include docket_tenant_fair_claim_v1.sql
-- The TenantFair admission engine, the only way a run of this fairness domain
-- is admitted or leased while admission_mode is 'tenant_fair'.
--
-- One call serializes on the singleton policy row (the durable scan cursor),
-- then visits up to 32 positions of the unfinished ring in cursor order. Each
-- visit tries its partition authority without waiting, freezes at most 16
-- candidate run ids, locks exactly those without waiting, rechecks them
-- against the live rows and chooses at most 8 outcomes as one grant. The
-- budgets are the specification's S = 32, Q = 8 and K = 16; they are repeated
-- in policy/budgets.go.
--
-- The outcomes of every grant are written by one statement at the end of the
-- call, with the grants' epochs and the cursor: a chosen row is locked by the
-- call and cannot change before then, and a write per call instead of one per
-- grant saves most of a grant's fixed cost. A wrap back to a partition that
-- still has unwritten outcomes writes them first, so that visit sees them.
--
-- Production reads only 'outcome' and 'error' rows; p_trace adds one
-- identity-bearing 'inspection' row per visit for trusted inspection.
--
-- Parked partitions (opt-in, docket_claim_policy.park_dormant): a visit
-- whose partition is dormant (no claimed running row, no healthy unclaimed
-- running row due at p_now) parks it until its earliest wake_at, and the walk
-- then visits only the awake ring (in_ring and parked_until is null). Each
-- call first unparks at most 64 partitions whose parked_until has come,
-- earliest first; the run lifecycle triggers unpark a partition when a write
-- can make one of its rows eligible. With park_dormant off the call is
-- exactly the specification's walk: it neither parks, sweeps nor reads
-- parked_until.
--
-- In parked mode an inspection row reports the park in columns that are null
-- on inspection rows otherwise: outcome_ordinal is 0 when the visit parked its
-- partition (the disposition stays empty_page), eligible_at is then the time
-- it is parked until (null when nothing of it is scheduled), and
-- claim_attempt is the number of partitions this call's wake sweep unparked.
--
-- The full-ring walk steps one position at a time while its visits grant,
-- as parked mode does: one keyset statement finds the next position, whose
-- partition lock statement probes its pages. From the first visit without
-- an outcome on, it discovers its positions a window at a time: one
-- statement reads the next distinct ring positions after the cursor with a
-- probe of each one's three pages, and a run of consecutive positions whose
-- probes found nothing is locked by one statement and inspected without
-- further SQL. A position whose probe found work is visited as one statement
-- for its partition lock and one for its candidates. On a ring where most
-- positions have work a call ends within a few granting visits, and a step
-- costs less than a window; where visits find nothing, the window saves a
-- statement per empty position. The visits, their order, dispositions,
-- grants and cursor are those of a walk that steps and locks one position
-- at a time; only fewer statements run (docs/claim-algorithm.md, the call
-- step by step).
--
-- A paused partition (docket_claim_partitions.paused, an operator's stop)
-- is still visited in ring order, in both walks: its visit takes the
-- partition lock and ends there with the disposition 'paused', granting and
-- leasing nothing and reading none of its pages, so its queued and ready
-- runs keep their order for the resume. Holders of its claimed runs are not
-- affected: they commit as any holder does. A paused partition is never
-- parked, since the park would hide it from the walk that must refuse it.
-- Its work is no work for the class probes either, so it never keeps a
-- call's last slot for a class only it holds.
--
-- Every probe of a page reads the page's first entry in its index order
-- (ORDER BY the index's columns, LIMIT 1) rather than asking EXISTS, which
-- drops any ORDER BY. A session plans each statement once, on the data of
-- its first call, and keeps the plan. On a fresh backlog the admitted
-- indexes are empty, and to the planner another index over a page's rows
-- (until schema V22, one of every admitted row of a scope) then costs as
-- little as the page's own: an unordered probe planned then kept reading
-- every admitted row of the scope with a filter, on every visit, as the
-- scope's claims grew. The order makes the page's index the only one that
-- needs no sort.
--
-- The ring is the positions whose docket_claim_schedule.in_ring holds, a
-- column PostgreSQL keeps as unfinished_count > 0. The ring indexes' predicates
-- name in_ring rather than the count, so the count's update on every insert
-- and finish changes no indexed column unless the scope joins or leaves the
-- ring, and PostgreSQL writes it as a heap-only update without new index
-- entries; every statement that walks the ring names in_ring to reach them.
--
-- A scope's admitted count is the sum of its two admitted pages, the
-- unclaimed (admitted-ready, due or not) and the claimed: no index of its
-- own is kept for it, since every claim would write an entry there too.
--
-- Each SQL statement of the engine sits between a "-- statement NAME" and an
-- "-- end statement" line; the plan regression test reads them from this file.
create or replace function docket_tenant_fair_claim(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_trace boolean
) returns table (
    row_kind text,
    error_reason text,
    run_id text,
    tenant_id text,
    graph_id text,
    graph_hash text,
    checkpoint_seq bigint,
    claim_token uuid,
    claimed_at timestamptz,
    claim_attempt integer,
    poisoned_at timestamptz,
    poison_reason text,
    work_class text,
    eligible_at timestamptz,
    call_token uuid,
    transaction_id bigint,
    visit_ordinal integer,
    outcome_ordinal integer,
    demand integer,
    cursor_before bigint,
    cursor_after bigint,
    ring_position bigint,
    scope_key text,
    disposition text,
    outcome_count integer,
    epoch_delta integer
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
    -- The statements below take arrays and per-visit scopes whose values do
    -- not change the right plan; replanning them on every call would cost
    -- more than running them.
    set plan_cache_mode = force_generic_plan
as $$
declare
    c_inspections constant integer := 32;
    c_grant_outcomes constant integer := 8;
    c_frozen constant integer := 16;
    -- A class whose head must be found freezes its first K / 4 rows ahead
    -- of the rest, so up to three rows held by other transactions can hand
    -- the head's place to the next; the other 8 frozen ids still cover the
    -- Q - 2 further outcomes the walk may take.
    c_class_reserve constant integer := 4;
    -- The first ring window of a call is this many positions, and never
    -- more than the demand left: a call that fills its demand within a few
    -- more visits probes few positions it never reaches, and a call over
    -- dormant positions reads the rest of its inspections as a second
    -- window.
    c_first_window constant integer := 4;
    -- The wake sweep unparks at most this many partitions per call: each is
    -- one schedule row update under the policy lock, so a call pays at most
    -- 64 extra row writes, and a burst of N simultaneous wakes is drained in
    -- ceil(N / 64) calls, earliest first.
    c_wake_batch constant integer := 64;

    v_precheck record;
    v_restore_lock_timeout text;
    v_policy_found boolean := false;
    v_mode text;
    v_default_cap integer;
    v_initialized_at timestamptz;
    v_park boolean;
    v_error text;
    v_woken integer;
    v_park_probe bigint;
    v_parked boolean;
    v_parked_until timestamptz;

    v_call_token uuid;
    v_xid bigint;
    v_cursor bigint;
    v_remaining integer := p_demand;
    v_visit integer := 0;
    -- An empty class counts as served, so it never withholds a slot.
    v_served_ready boolean := true;
    v_served_expired boolean := true;

    v_position bigint;
    v_scope text;
    -- The current ring window in visit order: its positions, their scopes
    -- and whether the window's probe found a page; the next entry to visit;
    -- the visited entry (null for a stepped visit); and the last entry of the
    -- empty run whose partitions are locked, with the scopes it locked.
    v_window integer;
    v_win_positions bigint[] := '{}';
    v_win_scopes text[] := '{}';
    v_win_pages boolean[] := '{}';
    v_win_next integer := 1;
    v_win_index integer;
    v_run_end integer := 0;
    v_run_scopes text[];
    v_run_locked text[];
    v_run_paused text[];
    v_cursor_before bigint;
    v_override integer;
    v_paused boolean;
    v_has_page boolean;
    v_cap integer;
    v_admitted bigint;
    v_limit integer;
    v_frozen integer;
    v_candidate record;
    v_class text;
    v_walk_served_ready boolean;
    v_walk_served_expired boolean;
    v_walk_remaining integer;
    v_queue_no integer;
    v_next_queue integer;
    v_lead boolean;
    v_lead_locked boolean;
    v_withheld boolean;
    v_no_slot boolean;
    v_take docket_claim_pending[];
    v_kept docket_claim_pending[];
    v_item docket_claim_pending;
    v_promote_ids bigint[];
    v_moved_ids bigint[];
    v_refused_ids bigint[];
    v_visit_outcomes integer;
    v_disposition text;

    -- Chosen but unwritten outcomes in call order, each with what its
    -- outcome row reports of its visit, and one scope entry per grant.
    v_pending docket_claim_pending[] := '{}';
    v_pending_grants text[] := '{}';
    v_written integer := 0;
    -- The full-ring walk steps until a visit ends without an outcome.
    v_stepping boolean := true;
begin
    -- The argument checks, the transaction contract and the lock wait cap,
    -- shared with Legacy.
    v_precheck := docket_claim_precheck('docket_tenant_fair_claim', p_now, p_cutoff, p_demand,
                                        p_max_attempts, p_preference, p_trace);
    v_error := v_precheck.o_error_reason;
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    <<claim>>
    begin
        -- A free policy row is taken without waiting, which keeps the
        -- uncontended call out of the subtransaction of an exception block;
        -- only a held row is waited for, within the lock wait the precheck
        -- set.
        -- statement policy_lock
        select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant
          into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park
          from docket_claim_policy p
         where p.id = 1
           for update skip locked;
        -- end statement
        v_policy_found := found;
        if not v_policy_found then
            begin
                -- statement policy_wait
                select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position, p.park_dormant
                  into v_mode, v_default_cap, v_initialized_at, v_cursor, v_park
                  from docket_claim_policy p
                 where p.id = 1
                   for update;
                -- end statement
                v_policy_found := found;
            exception when lock_not_available then
                v_error := 'lock_contention';
            end;
        end if;
        if v_error is null then
            if not v_policy_found then
                v_error := 'malformed_policy';
            elsif v_mode = 'legacy' and v_initialized_at is null then
                v_error := 'not_initialized';
            elsif v_mode is distinct from 'tenant_fair' then
                v_error := 'inactive_engine';
            elsif v_default_cap is null or v_default_cap < 1 or v_initialized_at is null
                    or v_cursor is null or v_cursor < 0 or v_park is null then
                v_error := 'malformed_policy';
            end if;
        end if;
        if v_error is not null then
            row_kind := 'error';
            error_reason := v_error;
            if v_error = 'lock_contention' then
                disposition := 'policy_cursor';
            end if;
            return next;
            exit claim;
        end if;

        -- Wake by time, before the walk so that this call already visits the
        -- partitions whose time has come. A row some writer holds is skipped
        -- rather than waited for (claim never waits on a schedule row) and
        -- stays due, so a later call unparks it, unless that writer wakes it
        -- itself (wake by write). Only claim calls park and
        -- sweep, and they serialize on the policy row, so no park can
        -- interleave with this statement.
        if v_park then
            -- statement wake_sweep
            with due as (
                select s.scope_key
                  from docket_claim_schedule s
                 where s.parked_until <= p_now
                 order by s.parked_until
                 limit c_wake_batch
                   for no key update skip locked
            )
            update docket_claim_schedule s
               set parked_until = null
             where s.scope_key = any (array(select d.scope_key from due d));
            -- end statement
            get diagnostics v_woken = row_count;
        end if;

        -- Class reservation only protects classes that have work somewhere:
        -- reserving an empty class would withhold the last slot of every
        -- call and force all S inspections for nothing.
        -- Each probe reads the oldest entry of the ready or expired index;
        -- ordering keeps the planner on that index however many rows match.
        -- Work of a paused partition is no work here: no visit could serve
        -- it, so reserving a slot for it would only withhold one from the
        -- others. Entries of paused partitions at the head of the index are
        -- stepped over, each checked in docket_claim_partitions_paused_idx.
        -- The expired class is probed in two steps. The first reads the
        -- domain's oldest claim of all, in docket_runs_expired_idx, the one
        -- index whose predicate is the claimed state and whose order is the
        -- statement's, so it reads one entry whatever the statistics say
        -- (as Legacy's probe does): while no claim has
        -- expired, the common case, the class is empty and nothing else is
        -- read. Only when some claim has expired does the second step look
        -- for one that is admitted and outside a paused partition. A single
        -- statement asking that at once could also be served by the
        -- admitted indexes, and with statistics taken before the domain's
        -- claims piled up a generic plan chose one of them and filtered
        -- every live claim on each call.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where docket_run_unclaimed(r) and r.wake_at <= p_now
                       and not exists (select from docket_claim_partitions pa
                                        where pa.scope_key = r.scope_key and pa.paused)
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where docket_run_claimed(r) and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
            if not v_served_expired then
                -- statement expired_probe
                select (select r.id from docket_runs r
                         where docket_run_marked_claimed(r)
                           and r.claimed_at < p_cutoff
                           and not exists (select from docket_claim_partitions pa
                                            where pa.scope_key = r.scope_key and pa.paused)
                         order by r.claimed_at, r.id
                         limit 1) is null
                  into v_served_expired;
                -- end statement
            end if;
        end if;

        -- Only trace rows identify the call; production rows leave it null.
        if p_trace then
            v_call_token := gen_random_uuid();
        end if;

        loop
            v_position := null;
            v_win_index := null;
            if v_visit < c_inspections and v_remaining > 0 then
                -- Discovery reads ring membership through MVCC and never
                -- locks a schedule row. Parked mode walks the awake ring
                -- through its own index, one keyset step past the
                -- call-local cursor at a time, wrapping to the smallest
                -- position.
                if v_park then
                    -- statement ring_step_awake
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.parked_until is null
                       and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap_awake
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring and s.parked_until is null
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                elsif v_stepping then
                    -- The full-ring walk's step: the same keyset step
                    -- through the whole ring.
                    -- statement ring_step
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.in_ring and s.ring_position > v_cursor
                     order by s.ring_position
                     limit 1;
                    -- end statement
                    if not found then
                        -- statement ring_wrap
                        select s.ring_position, s.scope_key
                          into v_position, v_scope
                          from docket_claim_schedule s
                         where s.in_ring
                         order by s.ring_position
                         limit 1;
                        -- end statement
                    end if;
                else
                    if v_win_next > cardinality(v_win_positions) then
                        -- The next window: the distinct ring positions that
                        -- the next steps reach, strictly after the cursor
                        -- and then wrapping once to the smallest position,
                        -- never more than the inspections left. Each comes
                        -- with the probe the partition lock statement makes
                        -- (one per page), taken in this statement's
                        -- snapshot; a wrap past the window reads a new one,
                        -- which may revisit positions.
                        v_window := least(c_inspections - v_visit,
                                          case when cardinality(v_win_positions) = 0
                                               then least(c_first_window, v_remaining)
                                               else c_inspections end);
                        -- statement ring_window
                        select coalesce(array_agg(w.pos order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.scope order by w.lap, w.pos), '{}'),
                               coalesce(array_agg(w.has_page order by w.lap, w.pos), '{}')
                          into v_win_positions, v_win_scopes, v_win_pages
                          from (select n.pos, n.scope, n.lap,
                                       coalesce(ar.found or qr.found or ex.found, false) as has_page
                                  from ((select s.ring_position as pos, s.scope_key as scope, 0 as lap
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position > v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        union all
                                        (select s.ring_position, s.scope_key, 1
                                           from docket_claim_schedule s
                                          where s.in_ring and s.ring_position <= v_cursor
                                          order by s.ring_position
                                          limit v_window)
                                        order by lap, pos
                                        limit v_window) as n
                                  -- One probe per page and position, each a
                                  -- lateral join and not an EXISTS in the
                                  -- select list: PostgreSQL 13 plans such an
                                  -- EXISTS with a hashed alternative that
                                  -- reads every due run of the domain.
                                  -- docket_runs_admitted_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as ar on true
                                  -- docket_runs_queued_ready_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                                      order by r.wake_at, r.id
                                                      limit 1) as qr on true
                                  -- docket_runs_admitted_claimed_idx
                                  left join lateral (select true as found
                                                       from docket_runs r
                                                      where r.scope_key = n.scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                                                      order by r.claimed_at, r.id
                                                      limit 1) as ex on true) as w;
                        -- end statement
                        v_win_next := 1;
                        v_run_end := 0;
                    end if;
                    if v_win_next <= cardinality(v_win_positions) then
                        v_win_index := v_win_next;
                        v_win_next := v_win_next + 1;
                        v_position := v_win_positions[v_win_index];
                        v_scope := v_win_scopes[v_win_index];
                    end if;
                end if;
            end if;

            -- The chosen outcomes are written when the call ends, and before
            -- a wrap revisits a partition that still has unwritten ones.
            if v_position is null or v_scope = any (v_pending_grants) then
                if cardinality(v_pending) = 0 and v_position is null and v_visit > 0 then
                    -- A call without outcomes only moves the cursor; the
                    -- write below would open every index of docket_runs
                    -- for nothing.
                    -- statement cursor_move
                    update docket_claim_policy p
                       set scan_ring_position = v_cursor
                     where p.id = 1;
                    -- end statement
                elsif cardinality(v_pending) > 0 then
                    -- One set-based mutation of the chosen rows, the epoch
                    -- of each grant and, at the end, the cursor. Every row
                    -- is locked by this call and was rechecked, so each is
                    -- written. A batch holds at most one grant per
                    -- partition, because a revisit writes the batch first.
                    -- The rows carry their visit and call-wide outcome
                    -- ordinals; callers order by those, not by arrival.
                    return query
                        -- statement write
                        with chosen as (
                            select t.id, t.kind, t.poison, t.eligible, t.visit, t.cursor_before,
                                   t.ring_position, t.scope_key, t.ordinal
                              from unnest(v_pending) with ordinality
                                       as t(id, kind, poison, eligible, visit, cursor_before,
                                            ring_position, scope_key, ordinal)
                        ), mutated as (
                            update docket_runs r
                               set claim_token = case when c.poison then null else gen_random_uuid() end,
                                   claimed_at = case when c.poison then null else p_now end,
                                   wake_at = null,
                                   claim_attempts = r.claim_attempts + case when c.poison then 0 else 1 end,
                                   tenant_admitted_at = case
                                       when c.poison then null
                                       when c.kind = 'queued_ready' then p_now
                                       else r.tenant_admitted_at end,
                                   poisoned_at = case when c.poison then p_now end,
                                   poison_reason = case when c.poison then 'max_claim_attempts_exceeded' end,
                                   updated_at = now()
                              from chosen c
                             where r.id = c.id
                            returning r.run_id, r.tenant_id, r.graph_id, r.graph_hash,
                                      r.checkpoint_seq, r.claim_token, r.claimed_at,
                                      r.claim_attempts, r.poisoned_at, r.poison_reason,
                                      c.kind, c.eligible, c.visit, c.cursor_before, c.ring_position,
                                      c.scope_key as visit_scope, c.ordinal
                        ), granted as (
                            -- Outcome-backed service evidence: once per grant.
                            update docket_claim_partitions pa
                               set admission_epoch = pa.admission_epoch + 1
                             where pa.scope_key = any (v_pending_grants)
                        ), moved as (
                            update docket_claim_policy p
                               set scan_ring_position = v_cursor
                             where p.id = 1 and v_position is null
                        )
                        select 'outcome'::text, null::text, m.run_id, m.tenant_id, m.graph_id,
                               m.graph_hash, m.checkpoint_seq, m.claim_token, m.claimed_at,
                               m.claim_attempts, m.poisoned_at, m.poison_reason, m.kind,
                               m.eligible, v_call_token, v_xid, m.visit,
                               (v_written + m.ordinal)::integer, p_demand,
                               m.cursor_before, m.ring_position, m.ring_position, m.visit_scope,
                               case m.kind
                                   when 'admitted_ready' then 'admitted_reacquisition'
                                   when 'queued_ready' then 'queued_promotion'
                                   else 'expired_recovery' end,
                               null::integer, null::integer
                          from mutated m;
                        -- end statement
                    v_written := v_written + cardinality(v_pending);
                    v_pending := '{}';
                    v_pending_grants := '{}';
                end if;
                exit when v_position is null;
            end if;

            v_visit := v_visit + 1;
            if v_xid is null then
                v_xid := txid_current();
            end if;
            v_cursor_before := v_cursor;
            v_cursor := v_position;
            v_visit_outcomes := 0;
            v_parked := false;
            v_parked_until := null;

            if v_win_index is not null and not v_win_pages[v_win_index] then
                -- A run of consecutive window positions whose probe found
                -- no page is locked when the walk reaches its first one,
                -- with the partition lock of each, without waiting; the
                -- window's probe stands for each lock statement's probe.
                -- The run ends before the next position with a page, so
                -- no visit in between can end the call: every partition
                -- locked here is one the walk inspects.
                if v_win_index > v_run_end then
                    v_run_end := v_win_index;
                    while v_run_end < cardinality(v_win_pages) and not v_win_pages[v_run_end + 1] loop
                        v_run_end := v_run_end + 1;
                    end loop;
                    v_run_scopes := v_win_scopes[v_win_index:v_run_end];
                    -- The lock returns each partition's newest committed
                    -- version, so a pause committed after the window's
                    -- snapshot is seen here.
                    -- statement empty_run_lock
                    select coalesce(array_agg(l.scope_key), '{}'),
                           coalesce(array_agg(l.scope_key) filter (where l.paused), '{}')
                      into v_run_locked, v_run_paused
                      from (select pa.scope_key, pa.paused
                              from docket_claim_partitions pa
                             where pa.scope_key = any (v_run_scopes)
                               for no key update skip locked) as l;
                    -- end statement
                    if not p_trace and v_run_end > v_win_index then
                        -- Without trace rows the rest of the run needs no
                        -- step of its own: each of its positions is one
                        -- inspection without an outcome, so the walk counts
                        -- them and moves the cursor to the run's last one.
                        -- No position of the run can hold unwritten
                        -- outcomes of this call: those rows are still due
                        -- in every snapshot until written, so the window's
                        -- probe would have found its page.
                        v_visit := v_visit + (v_run_end - v_win_index);
                        v_cursor := v_win_positions[v_run_end];
                        v_win_next := v_run_end + 1;
                    end if;
                end if;
                v_disposition := case when v_scope = any (v_run_paused) then 'paused'
                                      when v_scope = any (v_run_locked) then 'empty_page'
                                      else 'partition_lock_skip' end;
            else
                -- The lock statement also probes the three pages, so a visit
                -- with nothing due and nothing expired ends as empty_page
                -- without the candidate statement. Its snapshot predates the
                -- lock, which for an empty page only means the visit saw the
                -- scope a moment earlier; a page found here is read again, in
                -- a snapshot taken after the lock, by the candidate statement.
                -- A paused partition's pages are not probed: the case
                -- evaluates its branch only for an unpaused one. A position
                -- the ring window's probe found a page at is not probed
                -- again: the candidate statement reads its pages anyway, and
                -- a page gone since ends the visit there as empty_page, the
                -- disposition this probe would have given (the full-ring walk
                -- never parks, so the probe decides nothing else).
                -- statement partition_lock
                select pa.max_active, pa.paused,
                       case when pa.paused then false when v_win_index is not null then true else
                       (select true from docket_runs r
                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                         order by r.wake_at, r.id
                         limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                            order by r.wake_at, r.id
                            limit 1) is not null
                       or (select true from docket_runs r
                            where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                            order by r.claimed_at, r.id
                            limit 1) is not null
                       end
                  into v_override, v_paused, v_has_page
                  from docket_claim_partitions pa
                 where pa.scope_key = v_scope
                   for no key update skip locked;
                -- end statement

                if not found then
                    v_disposition := 'partition_lock_skip';
                elsif v_paused then
                    v_disposition := 'paused';
                elsif not v_has_page then
                    v_disposition := 'empty_page';
                    if v_park then
                        -- Park: first the schedule row, without waiting. A
                        -- writer that holds it has not committed, and its own
                        -- write will set the row right, so the partition stays
                        -- awake. Once the lock is held, a writer that could make
                        -- a row of the scope eligible either committed before it
                        -- (the next statement's snapshot, taken after the lock,
                        -- sees its row) or waits for this call and writes the
                        -- schedule row after the park. The dormancy probe of
                        -- the lock statement above is older than the lock, so
                        -- the park re-checks dormancy in its own snapshot.
                        -- statement park_lock
                        select s.ring_position
                          into v_park_probe
                          from docket_claim_schedule s
                         where s.scope_key = v_scope and s.parked_until is null
                           for no key update skip locked;
                        -- end statement
                        if found then
                            -- Dormant: no claimed running row (an expired steal
                            -- depends on the caller's cutoff, a live claim will
                            -- be released) and no healthy unclaimed running row
                            -- due at p_now. Parked until the earliest wake_at of
                            -- the scope's healthy unclaimed running rows, else
                            -- for good (a write wakes it).
                            -- A partition whose last unfinished run finished
                            -- after the probe has left the ring: it is not
                            -- walked, and its next run makes it a member again,
                            -- so it is not parked.
                            -- statement park
                            update docket_claim_schedule s
                               set parked_until = coalesce(least(
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_marked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1),
                                       (select r.wake_at from docket_runs r
                                         where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r)
                                         order by r.wake_at
                                         limit 1)), 'infinity')
                             where s.scope_key = v_scope and s.in_ring
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                                     order by r.wake_at, r.id
                                     limit 1) is null
                               and (select true from docket_runs r
                                     where r.scope_key = v_scope and docket_run_marked_claimed(r)
                                     order by r.claimed_at, r.id
                                     limit 1) is null
                               and not exists (select from docket_runs r
                                                where r.scope_key = v_scope and docket_run_unmarked_claimed(r))
                            returning s.parked_until
                              into v_parked_until;
                            -- end statement
                            v_parked := found;
                        end if;
                    end if;
                else
                    v_cap := coalesce(v_override, v_default_cap);
                    v_limit := least(c_grant_outcomes, v_remaining);
                    v_admitted := null;
                    v_frozen := 0;
                    v_no_slot := false;
                    v_lead_locked := false;
                    v_withheld := false;
                    v_walk_served_ready := v_served_ready;
                    v_walk_served_expired := v_served_expired;
                    v_walk_remaining := v_remaining;
                    v_queue_no := 0;
                    v_next_queue := 1;
                    v_take := '{}';
                    v_promote_ids := '{}';
                    v_moved_ids := '{}';
                    v_refused_ids := '{}';

                    -- One statement after the partition lock, so its snapshot
                    -- (admitted count and pages) sees every grant committed
                    -- before the lock. The pages are MVCC reads: admitted-ready
                    -- and expired rows up to K each, and the queued FIFO up to
                    -- this grant's limit, since promotion is contiguous from the
                    -- head and could never reach further. They are ranked, at
                    -- most K ids are frozen, and exactly those are locked without
                    -- waiting, in rank order. A lock returns the newest committed
                    -- version of its row, which the walk rechecks.
                    --
                    -- Freezing: the first K / 4 rows of each class whose head
                    -- matters (with demand >= 2 a class not yet served in this
                    -- call, with demand 1 both) first; admitted before queued;
                    -- with demand 1 the preferred class; then the FIFO order for
                    -- queued rows, and poison first, eligible time and id for the
                    -- others. A class's rows are its admitted-ready rows then its
                    -- queued FIFO (ready), resp. its expired rows, each by
                    -- eligible time and id. Queued rows rank among themselves in
                    -- FIFO order, so the frozen ones are a prefix of the FIFO.
                    --
                    -- The walk meets the rows after locking: admitted before
                    -- queued; then each class head whose place matters, chosen
                    -- among the rows this visit locked and found fresh (the
                    -- oldest admitted one of its class); with demand 1 the
                    -- preferred class; poison first, eligible time and id. The
                    -- queued rows come last in FIFO order and are numbered 1, 2,
                    -- ...; a queued row held elsewhere or stale still takes its
                    -- number, so it blocks every promotion behind it.
                    --
                    -- The admitted count only matters when a queued row could
                    -- meet the cap. Admitted and queued rows are both unfinished,
                    -- so while the scope has no more unfinished runs than its
                    -- cap no promotion of this visit can reach it, and the count
                    -- is skipped. Counting stops at cap + Q, beyond which at most
                    -- Q admitted poisons could never bring it under the cap.
                    for v_candidate in
                        -- statement candidates
                        with pages as (
                            -- Admitted-ready: docket_runs_admitted_ready_idx.
                            (select r.id, 'admitted_ready'::text as kind, 'ready'::text as class,
                                    r.wake_at as eligible, r.claim_attempts >= p_max_attempts as poison
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit c_frozen)
                            union all
                            -- Queued-ready, the FIFO: docket_runs_queued_ready_idx.
                            (select r.id, 'queued_ready', 'ready',
                                    r.wake_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_unmarked_unclaimed(r) and r.wake_at <= p_now
                              order by r.wake_at, r.id
                              limit v_limit)
                            union all
                            -- Expired admitted claims: docket_runs_admitted_claimed_idx.
                            (select r.id, 'expired', 'expired',
                                    r.claimed_at, r.claim_attempts >= p_max_attempts
                               from docket_runs r
                              where r.scope_key = v_scope and docket_run_marked_claimed(r) and r.claimed_at < p_cutoff
                              order by r.claimed_at, r.id
                              limit c_frozen)
                        ), ranked as (
                            select p.id, p.kind, p.class, p.eligible,
                                   case when row_number() over (partition by p.class
                                                 order by p.kind = 'queued_ready', p.eligible, p.id) <= c_class_reserve
                                             and (p_demand = 1 or not (case p.class
                                                 when 'ready' then v_served_ready
                                                 else v_served_expired end))
                                        then 0 else 1 end as reserved,
                                   case when p_demand = 1 and p.class <> p_preference then 1 else 0 end
                                       as preference_last,
                                   case when p.kind <> 'queued_ready' and p.poison then 0 else 1 end
                                       as poison_first
                              from pages p
                        ), frozen as (
                            select h.id, h.kind, h.class, h.eligible, h.preference_last, h.poison_first
                              from ranked h
                             order by h.reserved, h.kind = 'queued_ready', h.preference_last,
                                      h.poison_first, h.eligible, h.id
                             limit c_frozen
                        ), locked as (
                            -- Each frozen id by its primary key (docket_runs_pkey), in
                            -- rank order, without waiting; the locked version is the
                            -- newest committed one, rechecked against its kind.
                            select f.id, f.kind, f.class, f.eligible, f.preference_last, f.poison_first,
                                   l.id is not null as is_locked,
                                   coalesce(l.scope_key = v_scope
                                       and case f.kind
                                           when 'expired' then l.marked_claimed and l.claimed_at < p_cutoff
                                           when 'admitted_ready' then l.marked_unclaimed and l.wake_at <= p_now
                                           else l.unmarked_unclaimed and l.wake_at <= p_now
                                           end, false) as is_fresh,
                                   coalesce(l.claim_attempts >= p_max_attempts, false) as is_poison,
                                   case when f.kind = 'expired' then l.claimed_at else l.wake_at end
                                       as locked_eligible,
                                   f.kind = 'queued_ready' and l.wake_at is distinct from f.eligible as is_moved
                              from frozen f
                              left join lateral (
                                    select r.id, r.scope_key, r.claimed_at, r.wake_at, r.claim_attempts,
                                           docket_run_marked_claimed(r) as marked_claimed,
                                           docket_run_marked_unclaimed(r) as marked_unclaimed,
                                           docket_run_unmarked_unclaimed(r) as unmarked_unclaimed
                                      from docket_runs r
                                     where r.id = f.id
                                       for update skip locked) as l on true
                        ), judged as (
                            select k.id, k.kind, k.is_locked, k.is_fresh, k.is_poison, k.locked_eligible,
                                   k.is_moved, k.preference_last, k.poison_first, k.eligible,
                                   -- The scope's count (docket_claim_schedule_pkey), and its
                                   -- admitted rows only when it has more unfinished runs
                                   -- than its cap: the unclaimed ones on the admitted-ready
                                   -- page's index and the claimed ones on the expired page's,
                                   -- each read up to the bound, so the sum read up to it is
                                   -- exact.
                                   case when (select s.unfinished_count
                                                from docket_claim_schedule s
                                               where s.scope_key = v_scope) > v_cap
                                        then least((select count(*)
                                                      from (select
                                                              from docket_runs r
                                                             where r.scope_key = v_scope
                                                               and docket_run_marked_unclaimed(r)
                                                             limit v_cap::bigint + c_grant_outcomes) as a)
                                                   + (select count(*)
                                                        from (select
                                                                from docket_runs r
                                                               where r.scope_key = v_scope
                                                                 and docket_run_marked_claimed(r)
                                                               limit v_cap::bigint + c_grant_outcomes) as c),
                                                   v_cap::bigint + c_grant_outcomes)
                                        else 0 end as admitted,
                                   -- The class heads are chosen among the rows this visit
                                   -- locked and rechecked: the oldest fresh admitted row of
                                   -- each class, so a head held elsewhere hands its place to
                                   -- the next row of its class.
                                   coalesce(case when k.kind <> 'queued_ready' and k.is_fresh
                                                      and (p_demand = 1 or not (case k.class
                                                          when 'ready' then v_served_ready
                                                          else v_served_expired end))
                                                 then row_number() over (
                                                          partition by k.class, k.kind <> 'queued_ready' and k.is_fresh
                                                          order by k.eligible, k.id) = 1
                                                 end, false) as is_head
                              from locked k
                        )
                        select j.id, j.kind, j.admitted, j.is_locked, j.is_fresh, j.is_poison,
                               j.locked_eligible as eligible, j.is_moved
                          from judged j
                         order by j.kind = 'queued_ready', j.is_head desc, j.preference_last,
                                  j.poison_first, j.eligible, j.id
                        -- end statement
                    loop
                        v_frozen := v_frozen + 1;
                        if v_admitted is null then
                            v_admitted := v_candidate.admitted;
                            v_no_slot := v_admitted >= v_cap;
                        end if;
                        if v_candidate.kind = 'queued_ready' then
                            v_queue_no := v_queue_no + 1;
                        end if;
                        -- The lead rows are those an outcome could come from:
                        -- every admitted row and the queued FIFO head.
                        v_lead := v_candidate.kind <> 'queued_ready' or v_queue_no = 1;
                        continue when not v_candidate.is_locked;
                        if v_lead then
                            v_lead_locked := true;
                        end if;
                        continue when cardinality(v_take) >= v_limit;

                        v_class := case when v_candidate.kind = 'expired' then 'expired' else 'ready' end;
                        -- Last-slot rule: the final outcome of the call is kept
                        -- for a nonempty class that is still unserved.
                        if v_walk_remaining = 1 and p_demand >= 2
                                and not (case v_class when 'ready' then v_walk_served_expired
                                         else v_walk_served_ready end) then
                            if v_lead and v_candidate.is_fresh then
                                v_withheld := true;
                            end if;
                            continue;
                        end if;

                        if v_candidate.kind = 'queued_ready' then
                            -- Promotion is contiguous from the FIFO head: a head
                            -- that is missing, stale or without a slot blocks
                            -- everything behind it in this visit.
                            continue when v_queue_no <> v_next_queue;
                            continue when not v_candidate.is_fresh;
                            continue when v_admitted >= v_cap;
                            v_next_queue := v_next_queue + 1;
                            v_promote_ids := v_promote_ids || v_candidate.id;
                            if v_candidate.is_moved then
                                v_moved_ids := v_moved_ids || v_candidate.id;
                            end if;
                            if not v_candidate.is_poison then
                                v_admitted := v_admitted + 1;
                            end if;
                        else
                            continue when not v_candidate.is_fresh;
                            if v_candidate.is_poison then
                                -- An admitted poison releases its marker.
                                v_admitted := v_admitted - 1;
                            end if;
                        end if;

                        v_take := v_take || row(v_candidate.id, v_candidate.kind, v_candidate.is_poison,
                                                v_candidate.eligible, v_visit, v_cursor_before, v_position,
                                                v_scope)::docket_claim_pending;
                        v_walk_remaining := v_walk_remaining - 1;
                        if v_class = 'ready' then
                            v_walk_served_ready := true;
                        else
                            v_walk_served_expired := true;
                        end if;
                    end loop;

                    -- A promoted row is the FIFO head of the page's snapshot by
                    -- contiguity, unless its locked version is due at another
                    -- time than the page read. Such a row is re-checked in a
                    -- fresh snapshot against every older queued row of the
                    -- scope, and refused as stale if one is not promoted by this
                    -- grant.
                    if cardinality(v_moved_ids) > 0 then
                        -- statement fifo_recheck
                        select coalesce(array_agg(r.id), '{}')
                          into v_refused_ids
                          from docket_runs r
                         where r.id = any (v_moved_ids)
                           and exists (
                               select 1
                                 from docket_runs o
                                where o.scope_key = r.scope_key and docket_run_unmarked_unclaimed(o) and o.wake_at <= p_now
                                  and (o.wake_at, o.id) < (r.wake_at, r.id)
                                  and not (o.id = any (v_promote_ids)));
                        -- end statement
                        if cardinality(v_refused_ids) > 0 then
                            v_kept := '{}';
                            foreach v_item in array v_take loop
                                continue when v_item.id = any (v_refused_ids);
                                v_kept := v_kept || v_item;
                            end loop;
                            v_take := v_kept;
                        end if;
                    end if;

                    v_visit_outcomes := cardinality(v_take);
                    if v_visit_outcomes > 0 then
                        v_pending := v_pending || v_take;
                        v_pending_grants := v_pending_grants || v_scope;
                        foreach v_item in array v_take loop
                            if v_item.kind = 'expired' then
                                v_served_expired := true;
                            else
                                v_served_ready := true;
                            end if;
                        end loop;
                    end if;
                    v_remaining := v_remaining - v_visit_outcomes;
                    -- Without an outcome the first cause that applies names the
                    -- visit (docs/operations.md, visit dispositions): no slot
                    -- for its frozen queued rows, a fresh lead row the last-slot
                    -- rule withheld, lead rows locked here but stale (rows the
                    -- FIFO re-check refused count so), else every lead row held
                    -- elsewhere. Each holds whatever the freezing width was.
                    v_disposition := case
                        when v_visit_outcomes > 0 then 'grant'
                        when v_frozen = 0 then 'empty_page'
                        when v_queue_no > 0 and v_no_slot then 'cap_debt_denial'
                        when v_withheld then 'denied'
                        when v_lead_locked then 'stale'
                        else 'lock_miss' end;
                end if;
            end if;

            if v_visit_outcomes = 0 then
                v_stepping := false;
            end if;

            if p_trace then
                row_kind := 'inspection';
                error_reason := null;
                run_id := null;
                tenant_id := null;
                graph_id := null;
                graph_hash := null;
                checkpoint_seq := null;
                claim_token := null;
                claimed_at := null;
                claim_attempt := case when v_park then v_woken end;
                poisoned_at := null;
                poison_reason := null;
                work_class := null;
                eligible_at := case when v_parked and v_parked_until <> 'infinity' then v_parked_until end;
                call_token := v_call_token;
                transaction_id := v_xid;
                visit_ordinal := v_visit;
                outcome_ordinal := case when v_parked then 0 end;
                demand := p_demand;
                cursor_before := v_cursor_before;
                cursor_after := v_cursor;
                ring_position := v_position;
                scope_key := v_scope;
                disposition := v_disposition;
                outcome_count := v_visit_outcomes;
                epoch_delta := case when v_visit_outcomes > 0 then 1 else 0 end;
                return next;
            end if;
        end loop;
    end;

    if v_restore_lock_timeout is not null then
        perform set_config('lock_timeout', v_restore_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

drop index docket_claim_partitions_rate_idx;
drop function docket_rate_step(integer, interval);
alter table docket_claim_partitions
    drop constraint docket_claim_partitions_rate_check,
    drop column rate_tat,
    drop column rate_unlimited,
    drop column rate_burst,
    drop column rate_period,
    drop column rate_limit;
alter table docket_claim_policy
    drop constraint docket_claim_policy_rate_check,
    drop column rate_burst,
    drop column rate_period,
    drop column rate_limit;

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
