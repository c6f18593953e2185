
-- Schema V12: combined claims. A TenantFair caller that finds the cursor
-- held files a claim request and waits; the call that holds the cursor
-- walks once for its own demand and every pending request's, and leaves
-- each waiter its outcomes in its request row (docs/claim-algorithm.md,
-- "Combined claims"). The engine, docket_tenant_fair_claim v6, is
-- unchanged.

-- One outcome row of a claim call as a combined call stores it for a
-- waiter: the public columns of the engine's outcome rows, in their order.
create type docket_claim_outcome as (
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
    eligible_at timestamptz
);

-- A waiting claimer's demand, filed in a transaction of its own so that the
-- call holding the cursor sees it, and, once served, the outcomes that call
-- leased or poisoned for it. A row lives from its caller's first wait until
-- that caller collects or withdraws it, a few milliseconds; a row left by a
-- caller that is gone is deleted by a later serving call.
create table docket_claim_requests (
    request_id bigint generated always as identity
        constraint docket_claim_requests_pkey primary key,
    demand integer not null
        constraint docket_claim_requests_demand_check check (demand > 0),
    claim_ttl interval not null
        constraint docket_claim_requests_claim_ttl_check check (claim_ttl >= interval '0'),
    max_attempts integer not null
        constraint docket_claim_requests_max_attempts_check check (max_attempts > 0),
    preference text
        constraint docket_claim_requests_preference_check check (preference in ('ready', 'expired')),
    requested_at timestamptz not null default clock_timestamp(),
    served_at timestamptz,
    outcomes docket_claim_outcome[],
    -- Outcomes exist exactly once the request is served.
    constraint docket_claim_requests_served_check check ((served_at is null) = (outcomes is null))
);

-- The pending requests in filing order, which a serving call reads.
create index docket_claim_requests_pending_idx on docket_claim_requests (request_id)
    where served_at is null;

-- include docket_tenant_fair_claim_combined_v1.sql
-- A TenantFair claim call that may serve the demand of other claimers too
-- (combined claims). Every TenantFair call holds the policy row, the domain's
-- one cursor, for its whole duration, so many small concurrent callers each
-- wait for the whole call of every caller ahead of them. Here a caller that
-- finds the cursor held files a claim request (docket_claim_requests, its
-- own committed transaction) and waits for the cursor; whichever call holds
-- the cursor runs one walk of docket_tenant_fair_claim for its own demand
-- plus that of the pending requests and leaves each waiter its share of the
-- outcomes in the request's row. A waiter that then gets the cursor finds
-- its request served, takes its outcomes and releases the cursor without a
-- walk. The walk itself is unchanged: it is one call of the engine whose
-- demand is the sum, with every rule, cap and bound of any other call.
--
-- p_request is null on a first try, which never waits: when the cursor is
-- held it returns one row of kind 'busy' and changes nothing, and the caller
-- files a request and calls again with its id. With p_request the call waits
-- for the cursor within the lock wait of docket_claim_precheck. A request
-- the wait gave up on is withdrawn (the caller gets 'lock_contention') unless
-- a holder served it meanwhile, in which case its outcomes are returned.
--
-- Only requests with the caller's claim TTL, max attempts and preference are
-- combined, since the walk takes one of each; the others wait for a call of
-- their own kind. Outcomes go to the waiters in the order they filed their
-- requests, then to the caller: when the walk finds less than the combined
-- demand, the callers that waited longest are served first. An engine error
-- (for example the domain switched to Legacy) reaches only the caller; the
-- pending requests stay pending and their callers run their own calls.
--
-- outcome_ordinal orders the rows returned (the engine's visit and outcome
-- order); the claim queries order by it.
create or replace function docket_tenant_fair_claim_combined(
    p_now timestamptz,
    p_cutoff timestamptz,
    p_demand integer,
    p_max_attempts integer,
    p_preference text,
    p_request bigint
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
    outcome_ordinal bigint
)
    language plpgsql
    volatile
    security invoker
    set search_path from current
as $$
declare
    -- The combined demand of one walk stays within what one engine call can
    -- grant (S = 32 visits of at most Q = 8 outcomes); requests beyond it
    -- wait for the next holder.
    c_combined_demand constant integer := 256;
    -- A waiter gives up within the lock wait (250 ms), so a pending request
    -- older than this belongs to a caller that is gone: it is never served,
    -- and the next serving call deletes it.
    c_request_life constant interval := '10 seconds';

    v_precheck record;
    v_restore_lock_timeout text;
    v_held boolean;
    v_served timestamptz;
    v_own docket_claim_outcome[];
    v_requests bigint[];
    v_demands integer[];
    v_waiting integer;
    v_outcomes docket_claim_outcome[];
begin
    v_precheck := docket_claim_precheck('docket_tenant_fair_claim_combined', p_now, p_cutoff,
                                        p_demand, p_max_attempts, p_preference, false);
    v_restore_lock_timeout := v_precheck.o_restore_lock_timeout;
    if v_precheck.o_error_reason is not null then
        row_kind := 'error';
        error_reason := v_precheck.o_error_reason;
        return next;
        return;
    end if;

    -- statement combined_policy_lock
    perform from docket_claim_policy p where p.id = 1 for update skip locked;
    -- end statement
    v_held := found;
    if not v_held then
        if p_request is null then
            row_kind := 'busy';
            return next;
            perform set_config('lock_timeout', v_restore_lock_timeout, true)
              where v_restore_lock_timeout is not null;
            return;
        end if;
        begin
            -- statement combined_policy_wait
            perform from docket_claim_policy p where p.id = 1 for update;
            -- end statement
        exception when lock_not_available then
            -- statement request_withdraw
            delete from docket_claim_requests r
             where r.request_id = p_request and r.served_at is null;
            -- end statement
            if found then
                row_kind := 'error';
                error_reason := 'lock_contention';
                return next;
                perform set_config('lock_timeout', v_restore_lock_timeout, true)
                  where v_restore_lock_timeout is not null;
                return;
            end if;
        end;
    end if;

    if p_request is not null then
        -- statement request_collect
        delete from docket_claim_requests r
         where r.request_id = p_request
        returning r.served_at, r.outcomes into v_served, v_own;
        -- end statement
        if v_served is not null then
            return query
                select (v_own[g.i]).*, g.i::bigint
                  from generate_subscripts(v_own, 1) as g(i)
                 order by g.i;
            perform set_config('lock_timeout', v_restore_lock_timeout, true)
              where v_restore_lock_timeout is not null;
            return;
        end if;
    end if;

    -- Requests are only written under the cursor or by their own caller, so
    -- SKIP LOCKED passes over just a request whose caller is withdrawing it.
    -- statement requests_pending
    select array_agg(q.request_id order by q.request_id), array_agg(q.demand order by q.request_id)
      into v_requests, v_demands
      from (select l.request_id, l.demand,
                   sum(l.demand) over (order by l.request_id) as demand_through
              from (select r.request_id, r.demand
                      from docket_claim_requests r
                     where r.served_at is null
                       and r.requested_at > clock_timestamp() - c_request_life
                       and r.claim_ttl = p_now - p_cutoff
                       and r.max_attempts = p_max_attempts
                       and r.preference is not distinct from p_preference
                     order by r.request_id
                     limit c_combined_demand
                       for update skip locked) l) q
     where q.demand_through <= c_combined_demand - p_demand;
    -- end statement

    if v_requests is null then
        return query
            select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
                   c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
                   c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at,
                   row_number() over (order by c.visit_ordinal, c.outcome_ordinal nulls last)
              from docket_tenant_fair_claim(p_now, p_cutoff, p_demand, p_max_attempts,
                                            p_preference, false) as c
             where c.row_kind <> 'inspection';
        perform set_config('lock_timeout', v_restore_lock_timeout, true)
          where v_restore_lock_timeout is not null;
        return;
    end if;

    v_waiting := (select sum(d)::integer from unnest(v_demands) as d);
    select array_agg(row(c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
                         c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
                         c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at)::docket_claim_outcome
                     order by c.visit_ordinal, c.outcome_ordinal nulls last)
      into v_outcomes
      from docket_tenant_fair_claim(p_now, p_cutoff, v_waiting + p_demand, p_max_attempts,
                                    p_preference, false) as c
     where c.row_kind <> 'inspection';
    v_outcomes := coalesce(v_outcomes, '{}');

    if exists (select from unnest(v_outcomes) as o where o.row_kind = 'error') then
        return query
            select (v_outcomes[g.i]).*, g.i::bigint
              from generate_subscripts(v_outcomes, 1) as g(i)
             order by g.i;
        perform set_config('lock_timeout', v_restore_lock_timeout, true)
          where v_restore_lock_timeout is not null;
        return;
    end if;

    -- Waiter i takes the outcomes numbered after the demands of the waiters
    -- before it, up to its own; the caller takes what is left.
    -- statement requests_serve
    update docket_claim_requests r
       set served_at = clock_timestamp(),
           outcomes = coalesce((select array_agg(v_outcomes[g.i] order by g.i)
                                  from generate_subscripts(v_outcomes, 1) as g(i)
                                 where g.i > s.demand_through - s.demand
                                   and g.i <= s.demand_through), '{}')
      from (select w.request_id, w.demand,
                   sum(w.demand) over (order by w.ordinal) as demand_through
              from unnest(v_requests, v_demands) with ordinality as w(request_id, demand, ordinal)) s
     where r.request_id = s.request_id;
    -- end statement

    -- statement requests_expire
    delete from docket_claim_requests r
     where r.requested_at <= clock_timestamp() - c_request_life;
    -- end statement

    return query
        select (v_outcomes[g.i]).*, (g.i - v_waiting)::bigint
          from generate_subscripts(v_outcomes, 1) as g(i)
         where g.i > v_waiting
         order by g.i;
    perform set_config('lock_timeout', v_restore_lock_timeout, true)
      where v_restore_lock_timeout is not null;
    return;
end;
$$;
-- end include

