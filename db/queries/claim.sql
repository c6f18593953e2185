-- name: TenantFairClaim :many
-- Production TenantFair admission: the public columns of outcome and error
-- rows only, in visit and outcome order. Trace mode is off, and inspection
-- rows and internal columns never reach the decoder.
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from /*schema*/docket_tenant_fair_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, false) as c
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
  from /*schema*/docket_tenant_fair_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, true) as c
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: LegacyClaim :many
-- Tenant-blind Legacy admission: the public columns of outcome and error rows
-- in outcome order (Legacy has no visits and no inspection rows).
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from /*schema*/docket_legacy_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, false) as c
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
  from /*schema*/docket_legacy_claim(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text, true) as c
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: CommitClaimAsynchronously :exec
-- Config.Tuning.AsyncClaimCommit: queued right before the claim statement of a
-- claim batch that commits on its own (ClaimDue's and the Worker's). The
-- batch is one implicit transaction, so this local setting covers exactly
-- that transaction and is in force at its commit, which then does not wait
-- for its WAL flush (docs/performance.md, "synchronous_commit"). Never
-- queued inside a caller's transaction.
select set_config('synchronous_commit', 'off', true);

-- name: TenantFairClaimCombined :many
-- A production TenantFair call that may serve the demand of waiting
-- claimers too, or be served by the combiner it waits for (combined
-- claims): the public columns of outcome and error rows in the engine's
-- order.
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from /*schema*/docket_tenant_fair_claim_combined(
           sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
           sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text) as c
 order by c.outcome_ordinal;
