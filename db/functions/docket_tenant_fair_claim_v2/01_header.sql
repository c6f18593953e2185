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
