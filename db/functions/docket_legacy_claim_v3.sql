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
