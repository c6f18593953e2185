-- name: TenantFairClaim :many
-- Production TenantFair admission: the public columns of outcome and error
-- rows only, in visit and outcome order. Trace mode is off, and inspection
-- rows and internal columns never reach the decoder.
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from docket_tenant_fair_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, false) as c
 where c.row_kind <> 'inspection'
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: TenantFairClaimAsyncCommit :many
-- TenantFairClaim whose implicit transaction commits without waiting for its
-- WAL flush (docs/performance.md, "synchronous_commit"). The set_config is
-- local, so it ends with the statement's own implicit transaction and is in
-- force at its commit; the query must run as a statement of its own, never
-- inside a caller's transaction. It sits in a one-row subquery (volatile, so
-- the planner never flattens it) whose column the function call reads
-- through LATERAL: the function is the inner side of the join and cannot
-- start before set_config has run, whatever the plan and even when the call
-- returns no rows. The column is the trace argument, (setting is null),
-- which is false because set_config returns the new value 'off'; a column
-- reference is not a constant, so folding cannot drop the dependency.
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from (select set_config('synchronous_commit', 'off', true) as setting) as commit_mode
       cross join lateral docket_tenant_fair_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text,
           (commit_mode.setting is null)) as c
 where c.row_kind <> 'inspection'
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: TenantFairClaimTrace :many
-- Trusted inspection: every column of every row of a traced TenantFair call,
-- each visit's outcomes followed by its inspection row.
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at,
       c.call_token, c.transaction_id, c.visit_ordinal, c.outcome_ordinal,
       c.demand, c.cursor_before, c.cursor_after, c.ring_position, c.scope_key,
       c.disposition, c.outcome_count, c.epoch_delta
  from docket_tenant_fair_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, true) as c
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: LegacyClaim :many
-- Tenant-blind Legacy admission: the public columns of outcome and error rows
-- in outcome order (Legacy has no visits and no inspection rows).
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from docket_legacy_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, false) as c
 where c.row_kind <> 'inspection'
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: LegacyClaimAsyncCommit :many
-- LegacyClaim whose implicit transaction commits without waiting for its WAL
-- flush: the set_config subquery and its LATERAL dependency work as in
-- TenantFairClaimAsyncCommit.
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from (select set_config('synchronous_commit', 'off', true) as setting) as commit_mode
       cross join lateral docket_legacy_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text,
           (commit_mode.setting is null)) as c
 where c.row_kind <> 'inspection'
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: LegacyClaimTrace :many
-- Trusted inspection of a Legacy call: every column of its outcome and error
-- rows (Legacy has no visits, so it never produces inspection rows).
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at,
       c.call_token, c.transaction_id, c.visit_ordinal, c.outcome_ordinal,
       c.demand, c.cursor_before, c.cursor_after, c.ring_position, c.scope_key,
       c.disposition, c.outcome_count, c.epoch_delta
  from docket_legacy_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, true) as c
 order by c.visit_ordinal, c.outcome_ordinal nulls last;
