-- name: RefreshClaim :one
-- Every lifecycle write is one UPDATE, so the lifecycle change and the
-- admission marker change commit or roll back together. Holder writes match
-- the exact claim token (commit and abandon also the expected
-- checkpoint_seq): a stale holder matches no row and changes nothing.
-- Keeps the claim and the marker; claimed_at never moves backwards, so a
-- refresh cannot make a live claim look older to the expired scan.
update /*schema*/docket_runs
   set claimed_at = greatest(claimed_at, now()),
       updated_at = now()
 where scope_key = sqlc.arg(scope_key)::text and run_id = sqlc.arg(run_id)
   and claim_token = sqlc.arg(claim_token)::uuid
returning claimed_at;

-- name: ReleaseClaim :one
-- Generic immediate release: the run is due now and keeps its marker, so it
-- stays admitted-ready and is served again before any promotion.
update /*schema*/docket_runs
   set claim_token = null,
       claimed_at = null,
       wake_at = now(),
       updated_at = now()
 where scope_key = sqlc.arg(scope_key)::text and run_id = sqlc.arg(run_id)
   and claim_token = sqlc.arg(claim_token)::uuid
returning *;

-- name: CommitRun :one
-- A holder's checkpoint plus its schedule (retain, immediate, at, external,
-- terminal; validated by the caller). Only retain and the holder's own
-- immediate yield keep the marker; every other schedule leaves admission in
-- the same statement. A commit is progress, so the claim counters restart; a
-- claimed row is never poisoned, so there are no poison facts to reset.
-- The prior CTE locks the fenced row first, so marker_cleared compares the
-- marker this statement replaced with the one it wrote. The attempt change
-- (reset, keep, count) and an error entry, given only with count, ride on
-- the same statement so a failed attempt costs no extra round trip; the
-- history keeps its newest 20 entries (docket_runs_errors_bound_check). The
-- 'after' schedule takes its wake time from the database clock, so wake_at
-- is exactly updated_at plus the delay. last_commit_token records the claim
-- that made the commit (CommitApplied tells a holder's own commit by it).
with prior as (
    select id, tenant_admitted_at from /*schema*/docket_runs
     where scope_key = sqlc.arg(scope_key)::text and run_id = sqlc.arg(run_id)
       and claim_token = sqlc.arg(claim_token)::uuid
       and checkpoint_seq = sqlc.arg(expected_seq)
       for no key update
)
update /*schema*/docket_runs r
   set checkpoint_seq = r.checkpoint_seq + 1,
       state = coalesce(sqlc.narg(state)::text::jsonb, r.state),
       step = sqlc.arg(step),
       latest_checkpoint_type = sqlc.narg(checkpoint_type),
       status = sqlc.arg(status),
       claim_token = case when sqlc.arg(schedule)::text = 'retain' then r.claim_token end,
       claimed_at = case when sqlc.arg(schedule)::text = 'retain' then greatest(r.claimed_at, now()) end,
       wake_at = case sqlc.arg(schedule)::text
                     when 'immediate' then now()
                     when 'at' then sqlc.narg(wake_at)::timestamptz
                     when 'after' then now() + interval '1 microsecond' * sqlc.narg(wake_delay_us)::bigint
                 end,
       tenant_admitted_at = case when sqlc.arg(schedule)::text in ('retain', 'immediate')
                                 then r.tenant_admitted_at end,
       finished_at = case when sqlc.arg(schedule)::text = 'terminal' then now() end,
       claim_attempts = 0,
       claim_abandons = 0,
       attempt = case sqlc.arg(attempt_change)::text
                     when 'count' then least(r.attempt::bigint + 1, 2147483647)::integer
                     when 'keep' then r.attempt
                     else 0
                 end,
       errors = case when sqlc.narg(error_kind)::text is null then r.errors
                     else (case when jsonb_array_length(r.errors) >= 20 then r.errors - 0 else r.errors end)
                          || jsonb_build_array(jsonb_build_object(
                                 'attempt', least(r.attempt::bigint + 1, 2147483647),
                                 'at', now(),
                                 'kind', sqlc.narg(error_kind)::text,
                                 'error', coalesce(sqlc.narg(error_text)::text, '')))
                 end,
       last_commit_token = sqlc.arg(claim_token)::uuid,
       updated_at = now()
  from prior
 where r.id = prior.id
   and r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
   and r.claim_token = sqlc.arg(claim_token)::uuid
   and r.checkpoint_seq = sqlc.arg(expected_seq)
returning sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase,
          (prior.tenant_admitted_at is not null and r.tenant_admitted_at is null)::boolean as marker_cleared;

-- name: AbandonClaim :one
-- The holder cannot run this work on its host: the claim and the marker go,
-- so the slot is free for the tenant's next queued run. The run comes back
-- at the explicit retry time or after min(base * 2^abandons, cap), or is
-- poisoned when this abandon reaches a positive limit. The backoff is
-- computed in floating point so a large abandon count saturates at the cap
-- instead of overflowing an interval. As in CommitRun, marker_cleared
-- reports whether the row held a marker that this statement cleared.
with prior as (
    select id, tenant_admitted_at from /*schema*/docket_runs
     where scope_key = sqlc.arg(scope_key)::text and run_id = sqlc.arg(run_id)
       and claim_token = sqlc.arg(claim_token)::uuid
       and checkpoint_seq = sqlc.arg(expected_seq)
       for no key update
)
update /*schema*/docket_runs r
   set claim_token = null,
       claimed_at = null,
       tenant_admitted_at = null,
       claim_abandons = r.claim_abandons + 1,
       wake_at = case
           when sqlc.arg(max_abandons)::integer > 0
                and r.claim_abandons + 1 >= sqlc.arg(max_abandons)::integer then null
           else coalesce(sqlc.narg(retry_at)::timestamptz,
                         now() + make_interval(secs => least(
                             sqlc.arg(backoff_base_seconds)::float8 * power(2::float8, r.claim_abandons),
                             sqlc.arg(backoff_cap_seconds)::float8)))
       end,
       poisoned_at = case
           when sqlc.arg(max_abandons)::integer > 0
                and r.claim_abandons + 1 >= sqlc.arg(max_abandons)::integer then now()
       end,
       poison_reason = case
           when sqlc.arg(max_abandons)::integer > 0
                and r.claim_abandons + 1 >= sqlc.arg(max_abandons)::integer
               then 'max_claim_abandons_exceeded'
       end,
       updated_at = now()
  from prior
 where r.id = prior.id
   and r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
   and r.claim_token = sqlc.arg(claim_token)::uuid
   and r.checkpoint_seq = sqlc.arg(expected_seq)
returning sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase,
          (prior.tenant_admitted_at is not null)::boolean as marker_cleared;

-- name: ApplyRunMutation :one
-- The write of MutateRun, on a row its transaction already locked: an
-- unclaimed signal revokes any claim and leaves admission, so a resumed or
-- interrupted run re-enters its tenant's FIFO as queued. Leaving running
-- drops poison facts, which only a running row may carry.
update /*schema*/docket_runs r
   set status = sqlc.arg(status),
       state = coalesce(sqlc.narg(state)::text::jsonb, r.state),
       wake_at = case when sqlc.arg(status) = 'running'
                      then coalesce(sqlc.narg(wake_at)::timestamptz, now()) end,
       claim_token = null,
       claimed_at = null,
       tenant_admitted_at = null,
       poisoned_at = case when sqlc.arg(status) = 'running' then r.poisoned_at end,
       poison_reason = case when sqlc.arg(status) = 'running' then r.poison_reason end,
       finished_at = case when sqlc.arg(status) in ('done', 'failed', 'cancelled') then now() end,
       updated_at = now()
 where r.id = sqlc.arg(id)
returning sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase;

-- name: RetryPoisonedRun :one
-- An operator revives a poisoned run: healthy, due now, counters restarted.
-- Poison already cleared the marker, so the run is queued and must be
-- promoted again under its tenant's cap.
update /*schema*/docket_runs r
   set poisoned_at = null,
       poison_reason = null,
       wake_at = now(),
       claim_attempts = 0,
       claim_abandons = 0,
       updated_at = now()
 where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
   and r.status = 'running' and r.poisoned_at is not null
returning sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase;

-- name: RetryFinishedRun :one
-- An operator sends a finished run back to work, on a row its transaction
-- already locked. It re-enters its tenant's FIFO as queued: no claim, no
-- marker, due at the given time or now, with fresh claim counters. Poison
-- facts are already empty on a terminal row and stay so. State, step and
-- checkpoint_seq are kept: a retry is not a checkpoint, and holder writes
-- are fenced by the claim token, which a retry never issues. The handler
-- attempt counter restarts, so the retried run gets its Worker's whole retry
-- budget again; the error history is kept, since it says why the run
-- failed, with a retry entry appended. The status
-- trigger counts the run as unfinished again and the wake trigger unparks
-- its partition, so the ring stays exact.
update /*schema*/docket_runs r
   set status = 'running',
       wake_at = coalesce(sqlc.narg(wake_at)::timestamptz, now()),
       claim_token = null,
       claimed_at = null,
       tenant_admitted_at = null,
       poisoned_at = null,
       poison_reason = null,
       claim_attempts = 0,
       claim_abandons = 0,
       attempt = 0,
       finished_at = null,
       -- The history is kept and says where the count restarts: an entry
       -- of kind retry with the attempts spent before it and the status it
       -- left (the operator is not known here), within the bound of 20.
       errors = (case when jsonb_array_length(r.errors) >= 20 then r.errors - 0 else r.errors end)
                || jsonb_build_array(jsonb_build_object(
                       'attempt', greatest(r.attempt, 1),
                       'at', now(),
                       'kind', 'retry',
                       'error', 'retried by an operator from status ' || r.status)),
       updated_at = now()
 where r.id = sqlc.arg(id)
   and r.status in ('done', 'failed', 'cancelled')
returning sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase;

-- name: LockRun :one
-- MutateRun's serialization point: the decision sees the row as it is while
-- no claim call or holder can change it.
select sqlc.embed(r), /*schema*/docket_run_phase(r, now())::text as phase
  from /*schema*/docket_runs r
 where r.scope_key = sqlc.arg(scope_key)::text and r.run_id = sqlc.arg(run_id)
   for update of r;

-- name: GetRunFence :one
-- Explains a fenced write that matched nothing: missing run, stale fence, or
-- a run an operator cancelled.
select claim_token, checkpoint_seq, status from /*schema*/docket_runs
 where scope_key = sqlc.arg(scope_key)::text and run_id = sqlc.arg(run_id);
