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
