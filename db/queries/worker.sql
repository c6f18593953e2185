-- name: NotifyClaimRevoked :exec
-- Tells the Worker that holds a claim that an operator's write revoked it
-- (MutateRun, Cancel), so it ends that handler at once instead of at its
-- next heartbeat. It rides the due-run channel (RunsDueChannel builds the
-- same name) with the revoked claim token, which fences nothing any more,
-- and the run's new status as the payload; PostgreSQL delivers it at the
-- writer's commit and drops it on rollback.
select pg_notify('docket_runs_due_' || md5(n.nspname::text),
                 'revoked ' || sqlc.arg(claim_token)::text || ' ' || sqlc.arg(status)::text)
  from /*schema*/docket_claim_policy p
  join pg_catalog.pg_class c on c.oid = p.tableoid
  join pg_catalog.pg_namespace n on n.oid = c.relnamespace;

-- name: CommitRuns :many
-- The worker's set-based CommitRun: element i of the arrays is one holder's
-- commit, with its own schedule; docket_commit_runs says what each element
-- means and how the commits are fenced and ordered. A commit whose fence
-- fails is absent from the result, and the others still commit. The casts
-- give sqlc the columns' types, which it cannot read from a RETURNS TABLE
-- function; the function returns no nulls, so they stay non-null here.
select c.claim_token::uuid as claim_token, c.checkpoint_seq::bigint as checkpoint_seq,
       c.step::integer as step, c.marker_cleared::boolean as marker_cleared
  from /*schema*/docket_commit_runs(
           sqlc.arg(scope_keys)::text[], sqlc.arg(run_ids)::text[], sqlc.arg(claim_tokens)::text[],
           sqlc.arg(expected_seqs)::bigint[], sqlc.arg(steps)::integer[], sqlc.arg(states)::text[],
           sqlc.arg(checkpoint_types)::text[], sqlc.arg(statuses)::text[], sqlc.arg(schedules)::text[],
           sqlc.arg(wake_ats)::timestamptz[], sqlc.arg(wake_delays_us)::bigint[],
           sqlc.arg(attempt_changes)::text[], sqlc.arg(error_kinds)::text[],
           sqlc.arg(error_texts)::text[]) as c;

-- name: TenantFairClaimCombinedNoted :many
-- TenantFairClaimCombined for the Worker's claim batch: the same rows, and
-- the run ids it leased noted as an array literal in the transaction-local
-- setting docket.leased_run_ids for LeasedRuns, the batch's next statement;
-- the batch is one implicit transaction, so the note never outlives it. The
-- note is cleared before the function runs, so a call that leases nothing
-- leaves it empty whether or not the aggregate below runs: the clear sits
-- in a one-row subquery (volatile, so the planner never flattens it) whose
-- column the function call reads through LATERAL, which makes the function
-- the inner side of the join, unable to start before the clear, whatever
-- the plan. That column feeds the preference argument, which reads the
-- cleared note (not null, since set_config returns the new value); a column
-- reference is not a constant, so folding cannot drop the dependency. The
-- cross join with the one-row aggregate, whose column the filter reads,
-- writes the leases. A waiter's leases were written by the combiner that
-- served it and are committed; LeasedRuns reads them in a snapshot after
-- this statement.
with c as materialized (
    select f.*
      from (select set_config('docket.leased_run_ids', '{}', true) as cleared) as note
           cross join lateral /*schema*/docket_tenant_fair_claim_combined(
               sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
               sqlc.arg(max_attempts)::integer,
               case when note.cleared is not null then sqlc.narg(preference)::text end) as f
), noted as (
    select set_config('docket.leased_run_ids',
                      coalesce(array_agg(c.run_id) filter (where c.claim_token is not null), '{}')::text,
                      true) as run_ids
      from c
)
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from c cross join noted
 where noted.run_ids is not null
 order by c.outcome_ordinal;

-- name: LegacyClaimNoted :many
-- LegacyClaim for the Worker's claim batch, clearing and then noting its
-- leases for LeasedRuns as TenantFairClaimCombinedNoted does.
with c as materialized (
    select f.*
      from (select set_config('docket.leased_run_ids', '{}', true) as cleared) as note
           cross join lateral /*schema*/docket_legacy_claim(
               sqlc.arg(now)::timestamptz, sqlc.arg(cutoff)::timestamptz, sqlc.arg(demand)::integer,
               sqlc.arg(max_attempts)::integer, sqlc.narg(preference)::text,
               (note.cleared is null)) as f
), noted as (
    select set_config('docket.leased_run_ids',
                      coalesce(array_agg(c.run_id) filter (where c.claim_token is not null), '{}')::text,
                      true) as run_ids
      from c
)
select c.row_kind, c.error_reason, c.run_id, c.tenant_id, c.graph_id, c.graph_hash,
       c.checkpoint_seq, c.claim_token, c.claimed_at, c.claim_attempt,
       c.poisoned_at, c.poison_reason, c.work_class, c.eligible_at
  from c cross join noted
 where c.row_kind <> 'inspection' and noted.run_ids is not null
 order by c.visit_ordinal, c.outcome_ordinal nulls last;

-- name: LeasedRuns :many
-- What the Worker needs of the runs the latest noted claim statement of this
-- transaction leased. Its snapshot is taken after the claim, and the leased
-- rows stay locked by the claim until commit, so each row read is the leased
-- version and no concurrent write can come between. Outside a transaction
-- with a noted claim the note is unset or empty and nothing is read.
-- It cannot be folded into the claim statement as a join of the outcome
-- rows to docket_runs: that join would read in the claim statement's own
-- snapshot, taken before the function's first statement, while the function
-- picks and locks its candidates in later snapshots (after waiting for the
-- policy row, for one). A run committed in between would be leased but
-- missing from the join, and one written in between read in its older
-- version; state and step are not among the outcome columns, so they must
-- come from a snapshot that follows the claim.
select r.run_id, r.status, r.step, r.state, r.checkpoint_seq, r.claim_token, r.attempt, r.trace_context,
       r.max_attempts
  from /*schema*/docket_runs r
 where r.run_id = any(coalesce(nullif(current_setting('docket.leased_run_ids', true), ''), '{}')::text[]);

-- name: CommitApplied :one
-- Whether the row shows a holder's commit as its latest one, asked when that
-- commit met its fence after an earlier attempt lost its answer. Only a
-- commit moves checkpoint_seq, step and latest_checkpoint_type, and only a
-- holder of the claim token at expected_seq can commit, so seq + 1 with this
-- step and checkpoint type, made by this claim (last_commit_token, which
-- every commit writes), means exactly that commit happened; a later holder
-- that took over the claim and committed the same verdict left its own
-- token. The document is compared when the commit carried one, the claim
-- token when the commit kept the claim, and the status when it finished the
-- run (a terminal status never changes; other statuses and the wake time
-- may have been changed by a signal since, so they are not compared).
select exists (
    select 1 from /*schema*/docket_runs r
     where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
       and r.checkpoint_seq = sqlc.arg(expected_seq)::bigint + 1
       and r.last_commit_token = sqlc.arg(claim_token)::uuid
       and r.step = sqlc.arg(step)::integer
       and r.latest_checkpoint_type is not distinct from sqlc.narg(checkpoint_type)::text
       and (sqlc.narg(state)::text is null or r.state = sqlc.narg(state)::text::jsonb)
       and case when sqlc.arg(schedule)::text = 'retain'
                then r.claim_token is not distinct from sqlc.arg(claim_token)::uuid
                else r.claim_token is distinct from sqlc.arg(claim_token)::uuid end
       and (sqlc.arg(schedule)::text <> 'terminal' or r.status = sqlc.arg(status)::text)
) as applied;

-- name: NextRateToken :many
-- When a rate-limited partition with due queued work gets its next token
-- (its rate time less the burst's tolerance; docs/claim-algorithm.md,
-- "Rate-limited"), the earliest of them: a Worker whose claim call came
-- back unfilled wakes then instead of at its next poll. Only partitions
-- whose rate time lies ahead are read (docket_claim_partitions_rate_idx,
-- empty in a domain without rates), each with one probe of its queued page.
-- No row when there is none.
select (p.rate_tat - /*schema*/docket_rate_step(coalesce(p.rate_limit, pol.rate_limit),
                                                coalesce(p.rate_period, pol.rate_period))
                     * coalesce(p.rate_burst, pol.rate_burst))::timestamptz as next_token_at
  from /*schema*/docket_claim_partitions p
 cross join /*schema*/docket_claim_policy pol
 where pol.id = 1 and not pol.paused
   and p.rate_tat > now() and not p.paused
   and (p.rate_limit is not null or (not p.rate_unlimited and pol.rate_limit is not null))
   and exists (select from /*schema*/docket_runs r
                where r.scope_key = p.scope_key
                  and /*schema*/docket_run_unmarked_unclaimed(r) and r.wake_at <= now())
 order by 1
 limit 1;
