
-- The V1 sources create their functions, so the V3 versions are dropped
-- first. Dropping the claim function drops its EXECUTE grants: apply the
-- grants script again after a down.
drop function docket_tenant_fair_claim(timestamptz, timestamptz, integer, integer, text, boolean);

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
-- Each SQL statement of the engine sits between a "-- statement NAME" and an
-- "-- end statement" line; the plan regression test reads them from this file.
create function docket_tenant_fair_claim(
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
    c_lock_wait_ms constant numeric := 250;

    v_caller_lock_timeout text;
    v_lock_timeout_changed boolean := false;
    v_policy_found boolean := false;
    v_mode text;
    v_default_cap integer;
    v_initialized_at timestamptz;
    v_error text;

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
    v_cursor_before bigint;
    v_override integer;
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
    v_locked integer;
    v_fresh integer;
    v_cap_denied boolean;
    v_take_ids bigint[];
    v_take_kinds text[];
    v_take_poison boolean[];
    v_take_eligible timestamptz[];
    v_promote_ids bigint[];
    v_moved_ids bigint[];
    v_refused_ids bigint[];
    v_kept integer;
    v_visit_outcomes integer;
    v_disposition text;

    -- Chosen but unwritten outcomes in call order, the visit of each, and
    -- one scope entry per grant; then what each visit's outcome rows report.
    v_pending_ids bigint[] := '{}';
    v_pending_kinds text[] := '{}';
    v_pending_poison boolean[] := '{}';
    v_pending_eligible timestamptz[] := '{}';
    v_pending_visits integer[] := '{}';
    v_pending_grants text[] := '{}';
    v_written integer := 0;
    v_visit_cursor_before bigint[] := '{}';
    v_visit_position bigint[] := '{}';
    v_visit_scope text[] := '{}';
begin
    if p_now is null or p_cutoff is null or p_demand is null or p_max_attempts is null
            or p_trace is null then
        raise exception 'docket_tenant_fair_claim: arguments other than p_preference must not be null'
            using errcode = 'invalid_parameter_value';
    end if;
    if p_demand <= 0 or p_max_attempts <= 0 then
        raise exception 'docket_tenant_fair_claim: demand % and max attempts % must be positive',
                p_demand, p_max_attempts
            using errcode = 'invalid_parameter_value';
    end if;
    if p_cutoff > p_now then
        raise exception 'docket_tenant_fair_claim: cutoff % is after now %', p_cutoff, p_now
            using errcode = 'invalid_parameter_value';
    end if;
    if p_preference is not null and p_preference not in ('ready', 'expired') then
        raise exception 'docket_tenant_fair_claim: preference % is neither ready nor expired',
                quote_literal(p_preference)
            using errcode = 'invalid_parameter_value';
    end if;

    -- Admission needs a writable Read Committed transaction: only then does
    -- every statement below see a fresh snapshot after the lock it follows.
    if current_setting('transaction_read_only') = 'on' then
        v_error := 'read_only_transaction';
    elsif current_setting('transaction_isolation') <> 'read committed' then
        v_error := 'unsupported_isolation';
    end if;
    if v_error is not null then
        row_kind := 'error';
        error_reason := v_error;
        return next;
        return;
    end if;

    -- Cap every wait at 250 ms unless the caller already waits less.
    v_caller_lock_timeout := current_setting('lock_timeout');
    if extract(epoch from v_caller_lock_timeout::interval) * 1000 not between 1 and c_lock_wait_ms then
        perform set_config('lock_timeout', c_lock_wait_ms || 'ms', true);
        v_lock_timeout_changed := true;
    end if;

    <<claim>>
    begin
        -- A free policy row is taken without waiting, which keeps the
        -- uncontended call out of the subtransaction of an exception block;
        -- only a held row is waited for, within the lock_timeout above.
        -- statement policy_lock
        select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position
          into v_mode, v_default_cap, v_initialized_at, v_cursor
          from docket_claim_policy p
         where p.id = 1
           for update skip locked;
        -- end statement
        v_policy_found := found;
        if not v_policy_found then
            begin
                -- statement policy_wait
                select p.admission_mode, p.max_active, p.initialized_at, p.scan_ring_position
                  into v_mode, v_default_cap, v_initialized_at, v_cursor
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
                    or v_cursor is null or v_cursor < 0 then
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

        -- Class reservation only protects classes that have work somewhere:
        -- reserving an empty class would withhold the last slot of every
        -- call and force all S inspections for nothing.
        -- Each probe reads the oldest entry of the ready or expired index;
        -- ordering keeps the planner on that index however many rows match.
        if p_demand >= 2 then
            -- statement class_probes
            select (select r.id from docket_runs r
                     where r.status = 'running' and r.poisoned_at is null
                       and r.claim_token is null and r.wake_at <= p_now
                     order by r.wake_at, r.id
                     limit 1) is null,
                   (select r.id from docket_runs r
                     where r.status = 'running' and r.poisoned_at is null
                       and r.claim_token is not null and r.tenant_admitted_at is not null
                       and r.claimed_at < p_cutoff
                     order by r.claimed_at, r.id
                     limit 1) is null
              into v_served_ready, v_served_expired;
            -- end statement
        end if;

        v_call_token := gen_random_uuid();

        loop
            v_position := null;
            if v_visit < c_inspections and v_remaining > 0 then
                -- Discovery reads ring membership through MVCC and never
                -- locks a schedule row: one keyset step past the call-local
                -- cursor, wrapping to the smallest position.
                -- statement ring_step
                select s.ring_position, s.scope_key
                  into v_position, v_scope
                  from docket_claim_schedule s
                 where s.unfinished_count > 0 and s.ring_position > v_cursor
                 order by s.ring_position
                 limit 1;
                -- end statement
                if not found then
                    -- statement ring_wrap
                    select s.ring_position, s.scope_key
                      into v_position, v_scope
                      from docket_claim_schedule s
                     where s.unfinished_count > 0
                     order by s.ring_position
                     limit 1;
                    -- end statement
                end if;
            end if;

            -- The chosen outcomes are written when the call ends, and before
            -- a wrap revisits a partition that still has unwritten ones.
            if v_position is null or v_scope = any (v_pending_grants) then
                if cardinality(v_pending_ids) > 0 or (v_position is null and v_visit > 0) then
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
                            select t.id, t.kind, t.poison, t.eligible, t.visit, t.ordinal
                              from unnest(v_pending_ids, v_pending_kinds, v_pending_poison,
                                          v_pending_eligible, v_pending_visits)
                                       with ordinality as t(id, kind, poison, eligible, visit, ordinal)
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
                                      c.kind, c.eligible, c.visit, c.ordinal
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
                               v_visit_cursor_before[m.visit], v_visit_position[m.visit],
                               v_visit_position[m.visit], v_visit_scope[m.visit],
                               case m.kind
                                   when 'admitted_ready' then 'admitted_reacquisition'
                                   when 'queued_ready' then 'queued_promotion'
                                   else 'expired_recovery' end,
                               null::integer, null::integer
                          from mutated m;
                        -- end statement
                    v_written := v_written + cardinality(v_pending_ids);
                    v_pending_ids := '{}';
                    v_pending_kinds := '{}';
                    v_pending_poison := '{}';
                    v_pending_eligible := '{}';
                    v_pending_visits := '{}';
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
            v_visit_cursor_before := v_visit_cursor_before || v_cursor_before;
            v_visit_position := v_visit_position || v_position;
            v_visit_scope := v_visit_scope || v_scope;
            v_visit_outcomes := 0;

            -- The lock statement also probes the three pages, so a visit
            -- with nothing due and nothing expired ends as empty_page
            -- without the candidate statement. Its snapshot predates the
            -- lock, which for an empty page only means the visit saw the
            -- scope a moment earlier; a page found here is read again, in
            -- a snapshot taken after the lock, by the candidate statement.
            -- statement partition_lock
            select pa.max_active,
                   exists (select from docket_runs r
                            where r.scope_key = v_scope and r.status = 'running'
                              and r.poisoned_at is null and r.claim_token is null
                              and r.tenant_admitted_at is not null and r.wake_at <= p_now)
                   or exists (select from docket_runs r
                               where r.scope_key = v_scope and r.status = 'running'
                                 and r.poisoned_at is null and r.claim_token is null
                                 and r.tenant_admitted_at is null and r.wake_at <= p_now)
                   or exists (select from docket_runs r
                               where r.scope_key = v_scope and r.status = 'running'
                                 and r.poisoned_at is null and r.claim_token is not null
                                 and r.tenant_admitted_at is not null and r.claimed_at < p_cutoff)
              into v_override, v_has_page
              from docket_claim_partitions pa
             where pa.scope_key = v_scope
               for no key update skip locked;
            -- end statement

            if not found then
                v_disposition := 'partition_lock_skip';
            elsif not v_has_page then
                v_disposition := 'empty_page';
            else
                v_cap := coalesce(v_override, v_default_cap);
                v_limit := least(c_grant_outcomes, v_remaining);
                v_admitted := null;
                v_frozen := 0;
                v_locked := 0;
                v_fresh := 0;
                v_cap_denied := false;
                v_walk_served_ready := v_served_ready;
                v_walk_served_expired := v_served_expired;
                v_walk_remaining := v_remaining;
                v_queue_no := 0;
                v_next_queue := 1;
                v_take_ids := '{}';
                v_take_kinds := '{}';
                v_take_poison := '{}';
                v_take_eligible := '{}';
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
                -- The ranking: with demand >= 2 the head of each class not
                -- yet served in this call first; admitted before queued;
                -- with demand 1 the class heads, then the preferred class;
                -- then the FIFO order for queued rows, and poison first,
                -- eligible time and id for the others. A class head is the
                -- oldest admitted-ready row, or without one the queued FIFO
                -- head, and the oldest expired row. Queued rows rank among
                -- themselves in FIFO order, so the frozen ones are a prefix
                -- of the FIFO; the walk, which takes admitted rows before
                -- queued ones, meets them in that order and numbers them
                -- 1, 2, ...
                --
                -- The admitted count only matters when a queued row could
                -- meet the cap. Admitted and queued rows are both unfinished,
                -- so while the scope has no more unfinished runs than its
                -- cap no promotion of this visit can reach it, and the count
                -- is skipped. Counting stops at cap + Q, beyond which at most
                -- Q admitted poisons could never bring it under the cap.
                for v_candidate in
                    -- statement candidates
                    select f.id, f.kind,
                           case when (select s.unfinished_count
                                        from docket_claim_schedule s
                                       where s.scope_key = v_scope) > v_cap
                                then (select count(*)
                                        from (select
                                                from docket_runs r
                                               where r.scope_key = v_scope
                                                 and r.tenant_admitted_at is not null
                                                 and r.status = 'running' and r.poisoned_at is null
                                               limit v_cap::bigint + c_grant_outcomes) as a)
                                else 0 end as admitted,
                           l.id is not null as is_locked,
                           coalesce(l.scope_key = v_scope and l.status = 'running'
                               and l.poisoned_at is null
                               and case f.kind
                                   when 'expired' then l.claim_token is not null
                                       and l.claimed_at < p_cutoff
                                       and l.tenant_admitted_at is not null
                                   when 'admitted_ready' then l.claim_token is null
                                       and l.wake_at <= p_now
                                       and l.tenant_admitted_at is not null
                                   else l.claim_token is null
                                       and l.wake_at <= p_now
                                       and l.tenant_admitted_at is null
                                   end, false) as is_fresh,
                           coalesce(l.claim_attempts >= p_max_attempts, false) as is_poison,
                           case when f.kind = 'expired' then l.claimed_at else l.wake_at end as eligible,
                           f.kind = 'queued_ready' and l.wake_at is distinct from f.eligible as is_moved
                      from (select h.id, h.kind, h.eligible,
                                   case when p_demand >= 2 and h.head
                                             and not (case h.class when 'ready' then v_served_ready
                                                      else v_served_expired end)
                                        then 0 else 1 end as unserved_head,
                                   case when p_demand = 1 and h.head then 0 else 1 end as head_first,
                                   case when p_demand = 1 and h.class <> p_preference then 1 else 0 end
                                       as preference_last,
                                   case when h.kind <> 'queued_ready' and h.poison then 0 else 1 end
                                       as poison_first
                              from (select p.id, p.kind, p.class, p.eligible, p.poison,
                                           row_number() over (partition by p.class
                                               order by p.kind = 'queued_ready', p.eligible, p.id) = 1 as head
                                      from ((select r.id, 'admitted_ready'::text as kind, 'ready'::text as class,
                                                    r.wake_at as eligible, r.claim_attempts >= p_max_attempts as poison
                                               from docket_runs r
                                              where r.scope_key = v_scope and r.status = 'running'
                                                and r.poisoned_at is null and r.claim_token is null
                                                and r.tenant_admitted_at is not null and r.wake_at <= p_now
                                              order by r.wake_at, r.id
                                              limit c_frozen)
                                            union all
                                            (select r.id, 'queued_ready', 'ready',
                                                    r.wake_at, r.claim_attempts >= p_max_attempts
                                               from docket_runs r
                                              where r.scope_key = v_scope and r.status = 'running'
                                                and r.poisoned_at is null and r.claim_token is null
                                                and r.tenant_admitted_at is null and r.wake_at <= p_now
                                              order by r.wake_at, r.id
                                              limit v_limit)
                                            union all
                                            (select r.id, 'expired', 'expired',
                                                    r.claimed_at, r.claim_attempts >= p_max_attempts
                                               from docket_runs r
                                              where r.scope_key = v_scope and r.status = 'running'
                                                and r.poisoned_at is null and r.claim_token is not null
                                                and r.tenant_admitted_at is not null and r.claimed_at < p_cutoff
                                              order by r.claimed_at, r.id
                                              limit c_frozen)) as p) as h
                             order by unserved_head, h.kind = 'queued_ready', head_first, preference_last,
                                      poison_first, h.eligible, h.id
                             limit c_frozen) as f
                      left join lateral (
                            select r.id, r.scope_key, r.status, r.poisoned_at, r.claim_token,
                                   r.claimed_at, r.wake_at, r.tenant_admitted_at, r.claim_attempts
                              from docket_runs r
                             where r.id = f.id
                               for update skip locked) as l on true
                     order by f.kind = 'queued_ready', f.unserved_head, f.head_first, f.preference_last,
                              f.poison_first, f.eligible, f.id
                    -- end statement
                loop
                    v_frozen := v_frozen + 1;
                    if v_admitted is null then
                        v_admitted := v_candidate.admitted;
                    end if;
                    if v_candidate.kind = 'queued_ready' then
                        v_queue_no := v_queue_no + 1;
                    end if;
                    continue when not v_candidate.is_locked;
                    v_locked := v_locked + 1;
                    if v_candidate.is_fresh then
                        v_fresh := v_fresh + 1;
                    end if;
                    continue when cardinality(v_take_ids) >= v_limit;

                    v_class := case when v_candidate.kind = 'expired' then 'expired' else 'ready' end;
                    -- Last-slot rule: the final outcome of the call is kept
                    -- for a nonempty class that is still unserved.
                    continue when v_walk_remaining = 1 and p_demand >= 2
                        and not (case v_class when 'ready' then v_walk_served_expired
                                 else v_walk_served_ready end);

                    if v_candidate.kind = 'queued_ready' then
                        -- Promotion is contiguous from the FIFO head: a head
                        -- that is missing, stale or without a slot blocks
                        -- everything behind it in this visit.
                        continue when v_queue_no <> v_next_queue;
                        continue when not v_candidate.is_fresh;
                        if v_admitted >= v_cap then
                            v_cap_denied := true;
                            continue;
                        end if;
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

                    v_take_ids := v_take_ids || v_candidate.id;
                    v_take_kinds := v_take_kinds || v_candidate.kind;
                    v_take_poison := v_take_poison || v_candidate.is_poison;
                    v_take_eligible := v_take_eligible || v_candidate.eligible;
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
                            where o.scope_key = r.scope_key and o.status = 'running'
                              and o.poisoned_at is null and o.claim_token is null
                              and o.tenant_admitted_at is null and o.wake_at <= p_now
                              and (o.wake_at, o.id) < (r.wake_at, r.id)
                              and not (o.id = any (v_promote_ids)));
                    -- end statement
                    if cardinality(v_refused_ids) > 0 then
                        v_kept := 0;
                        for i in 1 .. cardinality(v_take_ids) loop
                            continue when v_take_ids[i] = any (v_refused_ids);
                            v_kept := v_kept + 1;
                            v_take_ids[v_kept] := v_take_ids[i];
                            v_take_kinds[v_kept] := v_take_kinds[i];
                            v_take_poison[v_kept] := v_take_poison[i];
                            v_take_eligible[v_kept] := v_take_eligible[i];
                        end loop;
                        v_take_ids := v_take_ids[1:v_kept];
                        v_take_kinds := v_take_kinds[1:v_kept];
                        v_take_poison := v_take_poison[1:v_kept];
                        v_take_eligible := v_take_eligible[1:v_kept];
                        -- Rows the FIFO re-check refused count as stale.
                        v_fresh := v_fresh - cardinality(v_refused_ids);
                    end if;
                end if;

                v_visit_outcomes := cardinality(v_take_ids);
                if v_visit_outcomes > 0 then
                    v_pending_ids := v_pending_ids || v_take_ids;
                    v_pending_kinds := v_pending_kinds || v_take_kinds;
                    v_pending_poison := v_pending_poison || v_take_poison;
                    v_pending_eligible := v_pending_eligible || v_take_eligible;
                    v_pending_visits := v_pending_visits || array_fill(v_visit, array[v_visit_outcomes]);
                    v_pending_grants := v_pending_grants || v_scope;
                    if 'expired' = any (v_take_kinds) then
                        v_served_expired := true;
                    end if;
                    if 'admitted_ready' = any (v_take_kinds) or 'queued_ready' = any (v_take_kinds) then
                        v_served_ready := true;
                    end if;
                end if;
                v_remaining := v_remaining - v_visit_outcomes;
                v_disposition := case
                    when v_visit_outcomes > 0 then 'grant'
                    when v_frozen = 0 then 'empty_page'
                    when v_locked = 0 then 'lock_miss'
                    when v_cap_denied then 'cap_debt_denial'
                    when v_fresh = 0 then 'stale'
                    else 'denied' end;
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
                claim_attempt := null;
                poisoned_at := null;
                poison_reason := null;
                work_class := null;
                eligible_at := null;
                call_token := v_call_token;
                transaction_id := v_xid;
                visit_ordinal := v_visit;
                outcome_ordinal := null;
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

    if v_lock_timeout_changed then
        perform set_config('lock_timeout', v_caller_lock_timeout, true);
    end if;
    return;
end;
$$;
-- end include

drop trigger docket_runs_wake_partition_trg on docket_runs;
drop function docket_runs_wake_partition();

drop trigger docket_runs_track_insert_trg on docket_runs;
drop function docket_runs_track_insert();

-- include docket_runs_track_insert_v1.sql
-- Creates the owner partition of every new run inside the inserting statement
-- and adds the new unfinished runs to the ring counter. Running once per
-- statement keeps bulk enqueues to one counter write per scope. Partitions are
-- created in key order so concurrent multi-tenant inserts lock alike.
create function docket_runs_track_insert() returns trigger
    language plpgsql
    security invoker
    set search_path from current
as $$
begin
    insert into docket_claim_partitions (scope_key)
    select distinct c.scope_key from docket_created_runs c order by c.scope_key
    on conflict (scope_key) do nothing;

    -- Lock the counters in scope order first, the order in which the
    -- worker's batch commit takes them, so that two writers touching the
    -- same scopes wait for each other instead of deadlocking; the update
    -- below would take them in whatever order its join produces.
    perform
       from docket_claim_schedule s
      where s.scope_key in (select c.scope_key from docket_created_runs c
                             where c.status in ('running', 'waiting'))
      order by s.scope_key
        for no key update;

    update docket_claim_schedule s
       set unfinished_count = s.unfinished_count + d.created,
           updated_at = now()
      from (select c.scope_key, count(*) as created
              from docket_created_runs c
             where c.status in ('running', 'waiting')
             group by c.scope_key) d
     where s.scope_key = d.scope_key;
    return null;
end;
$$;
-- end include

create trigger docket_runs_track_insert_trg
    after insert on docket_runs
    referencing new table as docket_created_runs
    for each statement execute function docket_runs_track_insert();

drop index docket_runs_unadmitted_claimed_idx;
drop index docket_claim_schedule_wake_idx;
drop index docket_claim_schedule_awake_idx;
alter table docket_claim_schedule drop column parked_until;
alter table docket_claim_policy
    drop column configured_park_dormant,
    drop column park_dormant;
